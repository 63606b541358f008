"""Every format of a handoff carries the same facts: each scenario in docs/examples/closure/ is
rendered as a comment, a step summary and text, and each fact must appear in all three."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.closure.derive import derive_closure
from holon.closure.evidence import parse_evidence
from holon.closure.handoff import Handoff, HandoffContext, build_handoff, render_handoff
from holon.closure.mapping import report_for

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "closure"
NAMES = sorted(p.name.removesuffix(".evidence.json") for p in EXAMPLES.glob("*.evidence.json"))
FORMATS = ("comment", "summary", "text")
CONTEXT = {
    "subject": {"kind": "issue", "id": "42"},
    "skill": "github-issue-solve",
    "title": "Cache misses after deploy",
    "evidence": ["pytest: 12 passed, 1 failed (test_cache_expiry)"],
    "artifacts": [
        {"name": "pull request 43", "url": "https://github.com/o/r/pull/43"},
        {"name": "patch", "path": "runs/act_1/diff.patch"},
    ],
    "state": ["run id act_1-1"],
    "details": "line one of the log\nline two: FAILED test_cache_expiry",
    "interrupted_by": "maintainer-bob",
}
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>=:])")


def _normalized(text: str) -> str:
    """Rendered text as a reader sees it: Markdown escapes undone, whitespace collapsed."""
    text = _ESCAPED.sub(r"\1", text).replace("&amp;", "&").replace("\u200b", "")
    return " ".join(text.split())


def _handoff(name: str) -> Handoff:
    closure = derive_closure(parse_evidence((EXAMPLES / f"{name}.evidence.json").read_bytes()))
    return build_handoff(closure, report_for(closure), HandoffContext.model_validate(CONTEXT))


def _facts(h: Handoff) -> list[str]:
    facts = [h.outcome or "continuing", *h.evidence, *h.recorded]
    facts += [a.name for a in h.context.artifacts]
    facts += [a.url for a in h.context.artifacts if a.url]
    facts += [a.path for a in h.context.artifacts if a.path]
    facts += [h.context.title or "", *(h.context.details or "").splitlines()]
    if h.next is None:
        facts.append(h.closure.detail)
    else:
        facts += [h.next.owner, h.next.action]
        if h.next.question is not None:
            facts += [h.next.question.id, h.next.question.text]
    return [" ".join(f.split()) for f in facts if f]


@pytest.mark.parametrize("name", NAMES)
def test_every_format_carries_the_same_facts(name: str) -> None:
    handoff = _handoff(name)
    facts = _facts(handoff)
    for fmt in FORMATS:
        shown = _normalized(render_handoff(handoff, fmt))  # type: ignore[arg-type]
        missing = [fact for fact in facts if fact not in shown]
        assert missing == [], f"{fmt} lacks {missing}"


def test_the_facts_include_question_interruption_and_next_owner() -> None:
    # The fact list itself is not empty-handed: the kinds the issue names are all in it.
    question = _facts(_handoff("question"))
    assert "Which database should the cache use?" in question
    assert "question id q1" in question
    assert "maintainer" in question
    stop = _facts(_handoff("user_stop"))
    assert any("stopped by maintainer (stop_command)" in f for f in stop)
    assert any("maintainer-bob" in f for f in stop)
    assert "holon" in _facts(_handoff("timer"))


def test_cli_text_and_summary_show_the_question_the_comment_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["closure", "derive", str(EXAMPLES / "question.evidence.json")]) == 2
    record: dict[str, Any] = json.loads(capsys.readouterr().out)
    path = tmp_path / "closure.json"
    path.write_text(json.dumps(record))
    for fmt in FORMATS:
        assert main(["handoff", "render", str(path), "--format", fmt]) == 0
        shown = _normalized(capsys.readouterr().out)
        assert "none recorded" not in shown
        assert "question id q1" in shown
        assert "Which database should the cache use?" in shown
