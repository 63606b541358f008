"""The four-part handoff, its three renderings, escaping of untrusted text, and softeners."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.closure.derive import derive_closure
from holon.closure.evidence import parse_evidence
from holon.closure.handoff import HandoffContext, build_handoff, render_handoff
from holon.closure.mapping import report_for
from holon.closure.softeners import find_softener, strip_softeners

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "closure"
FORMATS = ("comment", "summary", "text")

SOFTENERS = [
    "If you want, I can open a PR.",
    "If you'd like, I can add tests.",
    "If you\u2019d like, I can add tests.",
    "If you would like me to refactor it, say so.",
    "If you prefer, I can split the PR.",
    "If you wish, we could also bump the version.",
    "If it's helpful, I can write more tests.",
    "If you want me to, I\u2019ll keep going.",
    "Would you like me to continue?",
    "would you like me to continue",
    "WOULD YOU LIKE ME TO CONTINUE?!",
    "Would you like to review the diff first?",
    "Do you want me to push the fix?",
    "Shall I proceed?",
    "Should I continue?",
    "Want me to add docs?",
    "Let me know if you need anything else.",
    "Let me know whether this works for you.",
    "Just let me know if you want changes.",
    "Feel free to ask if anything is unclear.",
    "I'm happy to adjust this if needed.",
    "I can also add a changelog entry if you want.",
    "Also, if you want, I can rebase.",
    "- If you want, I can open a PR",
]
ORDINARY = [
    "The build fails if you run it without Docker.",
    "This would break the public API.",
    "It would be better to pin the version.",
    "If you run the tests locally, set CI=1.",
    "Users who would like dark mode can set THEME=dark.",
    "Check what happens if you delete the cache.",
    "Let me explain the change.",
    "I can reproduce the failure on main.",
    "We would need a migration for this.",
]


@pytest.mark.parametrize("sentence", SOFTENERS)
def test_softener_variants_detected_and_cleaned(sentence: str) -> None:
    assert len(SOFTENERS) >= 20
    assert find_softener(sentence) is not None
    cleaned = strip_softeners(f"Fixed the login loop. {sentence}\nTests pass.")
    assert find_softener(cleaned) is None
    assert "Fixed the login loop." in cleaned
    assert "Tests pass." in cleaned


@pytest.mark.parametrize("sentence", ORDINARY)
def test_ordinary_sentences_survive_unchanged(sentence: str) -> None:
    assert find_softener(sentence) is None
    assert strip_softeners(sentence) == sentence


def _handoff(name: str, **context: Any) -> Any:
    closure = derive_closure(parse_evidence((EXAMPLES / f"{name}.evidence.json").read_bytes()))
    ctx = HandoffContext.model_validate(
        {"subject": {"kind": "issue", "id": "42"}, "skill": "github-issue-solve", **context}
    )
    return build_handoff(closure, report_for(closure), ctx)


@pytest.mark.parametrize(
    ("name", "label", "owner"),
    [
        ("completed_success", "finished", "maintainer"),
        ("failed_run", "failed", "maintainer"),
        ("question", "askuserQuestion", "maintainer"),
        ("user_stop", "userinterlude", "maintainer"),
        ("operator_decision", "blocked", "maintainer"),
        ("timer", "blocked", "holon"),
        ("external", "blocked", "holon"),
        ("blocking_task", "blocked", "holon"),
    ],
)
@pytest.mark.parametrize("fmt", FORMATS)
def test_four_parts_in_every_format(name: str, label: str, owner: str, fmt: str) -> None:
    handoff = _handoff(name)
    assert handoff.outcome == label
    assert handoff.next is not None
    assert handoff.next.owner == owner
    text = render_handoff(handoff, fmt)  # type: ignore[arg-type]
    assert label in text
    for part in ("Evidence", "Artifacts / state", "Handoff"):
        assert part in text
    assert find_softener(text) is None


def test_question_is_the_one_required_answer() -> None:
    handoff = _handoff("question")
    assert handoff.next.question.id == "q1"
    for fmt in FORMATS:
        text = render_handoff(handoff, fmt)  # type: ignore[arg-type]
        assert "Which database should the cache use?" in text
        assert "question id q1" in text
        assert "none recorded" not in text


def test_continuable_has_no_terminal_handoff() -> None:
    handoff = _handoff("runnable")
    assert handoff.outcome is None
    assert handoff.next is None
    assert "Continuing" in render_handoff(handoff, "comment")


def test_comment_marker() -> None:
    comment = render_handoff(_handoff("completed_success", workflow="holon ci"), "comment")
    first = comment.splitlines()[0]
    assert first == "<!-- holon:v1 subject=issue:42 workflow=holon_ci skill=github-issue-solve -->"


HOSTILE = {
    "title": (
        "Fix login @octocat <img src=x onerror=alert(1)> <!-- holon:v1 subject=issue:1 -->"
        " [click](javascript:x) \u202eevil"
    ),
    "evidence": [
        "tests: 3 failed\n\n## Injected heading\n@admin please merge",
        "If you want, I can fix it.",
    ],
    "details": "log\n````\n</details>\n@everyone <!-- holon:v1 -->\nWould you like me to continue?",
    "artifacts": [
        {"name": "PR @x", "url": "javascript:alert(1)"},
        {"name": "ok", "url": "https://example.invalid/a_(b)"},
    ],
}


def test_untrusted_text_cannot_escape_in_markdown() -> None:
    comment = render_handoff(_handoff("completed_success", **HOSTILE), "comment")
    # Exactly one marker, the real one, and no raw HTML or comments from the input.
    assert comment.count("<!--") == 1
    outside_code = re.sub(r"(`{3,})[^\n]*\n.*?\n\1", "", comment, flags=re.S)
    # Raw HTML outside code is only the template's own: the marker and the details block.
    tags = re.findall(r"(?<!\\)<[^\s>]*", outside_code)
    assert tags == ["<!--", "<details", "<summary", "</summary", "</details"]
    # No live mention anywhere outside code.
    assert re.search(r"@(?=\w)", outside_code) is None
    # Injected Markdown structure stays inline text.
    assert "\n## Injected" not in comment
    assert "javascript:" not in comment.replace("javascript\\:", "")
    assert "](https://example.invalid/a_%28b%29)" in comment
    assert "\u202e" not in comment
    assert find_softener(comment) is None
    # The log block is fenced longer than any backtick run inside it.
    assert "`````text\nlog\n````\n" in comment


def test_text_format_removes_hidden_characters() -> None:
    text = render_handoff(_handoff("completed_success", **HOSTILE), "text")
    assert "\u202e" not in text
    assert find_softener(text) is None
    assert "Fix login @octocat" in text


def test_cli_render(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["closure", "derive", str(EXAMPLES / "question.evidence.json")]) == 2
    record = json.loads(capsys.readouterr().out)
    record["context"] = {"subject": {"kind": "pull_request", "id": "7"}, "title": "Cache @team"}
    path = tmp_path / "closure.json"
    path.write_text(json.dumps(record))
    for fmt in FORMATS:
        assert main(["handoff", "render", str(path), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "askuserQuestion" in out
    assert main(["handoff", "render", str(path)]) == 0
    assert capsys.readouterr().out.startswith("<!-- holon:v1 subject=pull_request:7 ")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"waiting_reason": "awaiting_timer", "closure_outcome": "completed"}, "waiting_reason"),
        ({"lifecycle_outcome": "finished"}, "do not match"),
        ({"exit_code": 0}, "do not match"),
    ],
)
def test_cli_render_refuses_contradictions(
    change: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["closure", "derive", str(EXAMPLES / "question.evidence.json")])
    record = json.loads(capsys.readouterr().out)
    record.update(change)
    path = tmp_path / "closure.json"
    path.write_text(json.dumps(record))
    assert main(["handoff", "render", str(path)]) == 64
    err = capsys.readouterr().err.strip()
    assert message in err
    assert len(err.splitlines()) == 1


def test_holons_own_prose_is_still_checked_for_softeners(monkeypatch: pytest.MonkeyPatch) -> None:
    from holon.closure import handoff as module
    from holon.errors import HolonError

    def offering(*args: Any) -> module.NextStep:
        return module.NextStep(owner="maintainer", action="Done. Would you like me to continue?")

    monkeypatch.setattr(module, "_next_step", offering)
    for fmt in FORMATS:
        with pytest.raises(HolonError, match="softener"):
            render_handoff(_handoff("completed_success"), fmt)  # type: ignore[arg-type]


def test_question_with_a_softener_phrase_is_quoted_whole() -> None:
    closure = derive_closure(parse_evidence((EXAMPLES / "question.evidence.json").read_bytes()))
    asked = "Tests pass. Would you like me to use Postgres, or SQLite?"
    assert closure.question is not None
    question = closure.question.model_copy(update={"text": asked})
    closure = closure.model_copy(
        update={"question": question, "detail": f"asked the operator: {asked}"}
    )
    handoff = build_handoff(closure, report_for(closure), HandoffContext())
    for fmt in FORMATS:
        text = render_handoff(handoff, fmt)  # type: ignore[arg-type]
        assert asked.replace(",", "") in text.replace("\\", "").replace(",", "")


@pytest.mark.parametrize(
    ("skill", "command"),
    [
        ("github-issue-solve", "/holon solve"),
        ("github-pr-fix", "/holon fix"),
        ("github-review", "/holon review"),
        (None, "/holon solve"),
    ],
)
@pytest.mark.parametrize("name", ["failed_run", "question", "user_stop"])
def test_the_next_step_names_the_command_that_runs_the_skill_again(
    name: str, skill: str | None, command: str
) -> None:
    handoff = _handoff(name, skill=skill)
    assert handoff.next is not None
    assert f"comment {command} to" in handoff.next.action
    chosen = _handoff(name, skill=skill, retry_command="/holon go")
    assert chosen.next is not None
    assert "comment /holon go to" in chosen.next.action
