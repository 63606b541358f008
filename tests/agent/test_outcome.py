"""The outcome rules, one row each: success only with finish(success), every cited verification
recorded with exit 0 and the skill's requirements met; any other stop a failure naming it."""

from __future__ import annotations

from typing import Any

import pytest

from holon.agent.conversation import Usage
from holon.agent.engine import EngineResult, Finish
from holon.agent.outcome import Limits, Verdict, human_duration, judge, manifest_for
from holon.skills.catalog import SkillRequires

LIMITS = Limits(max_steps=30, timeout=300.0)
NONE = SkillRequires()
SOLVE = SkillRequires(change=True, verification=True)
CODES = {1: 0, 2: 1, 3: None}


def _finish(
    status: str = "success", verification: list[int] | None = None, **extra: Any
) -> EngineResult:
    return EngineResult(
        stop="finished",
        finish=Finish.model_validate(
            {"status": status, "summary": "done", "verification": verification or [], **extra}
        ),
    )


QUESTION = {"id": "which-db", "text": "Postgres or SQLite?"}

ROWS: list[tuple[str, EngineResult, SkillRequires, bool | None, Verdict]] = [
    ("success, nothing required", _finish(), NONE, None, Verdict("success")),
    ("success, verified and changed", _finish(verification=[1]), SOLVE, True, Verdict("success")),
    (
        "cited command failed",
        _finish(verification=[1, 2]),
        NONE,
        None,
        Verdict("failure", "verification command 2 exited with 1, not 0"),
    ),
    (
        "cited command never recorded",
        _finish(verification=[9]),
        NONE,
        None,
        Verdict("failure", "verification command 9 cited in finish was never recorded"),
    ),
    (
        "cited command timed out",
        _finish(verification=[3]),
        NONE,
        None,
        Verdict("failure", "verification command 3 did not complete (timed out)"),
    ),
    (
        "verification required, none cited",
        _finish(),
        SkillRequires(verification=True),
        None,
        Verdict(
            "failure",
            "the skill requires a recorded passing verification (tests or a build) cited in "
            "finish; none was cited",
        ),
    ),
    (
        "change required, workspace unchanged",
        _finish(verification=[1]),
        SOLVE,
        False,
        Verdict(
            "failure", "the skill requires a change in the workspace; the workspace is unchanged"
        ),
    ),
    (
        "change required, cannot tell",
        _finish(verification=[1]),
        SOLVE,
        None,
        Verdict(
            "failure",
            "the skill requires a change in the workspace, and whether there is one could not "
            "be told",
        ),
    ),
    (
        "model reported failure",
        _finish("failure"),
        NONE,
        None,
        Verdict("failure", "the model reported failure: done"),
    ),
    (
        "needs_human with a question",
        _finish("needs_human", question=QUESTION),
        SOLVE,
        False,
        Verdict("needs_human", None, "which-db", "Postgres or SQLite?"),
    ),
    (
        "needs_human without a question",
        _finish("needs_human"),
        NONE,
        None,
        Verdict("failure", "the model asked for a human but gave no question to ask"),
    ),
    (
        "no finish",
        EngineResult(stop="no_finish"),
        NONE,
        None,
        Verdict("failure", "the model stopped without calling finish"),
    ),
    (
        "max steps",
        EngineResult(stop="max_steps"),
        NONE,
        None,
        Verdict("failure", "max_steps 30 reached without finish"),
    ),
    (
        "timeout",
        EngineResult(stop="timeout"),
        NONE,
        None,
        Verdict("failure", "timeout after 5m without finish"),
    ),
    (
        "refused",
        EngineResult(stop="refused", error="content policy"),
        NONE,
        None,
        Verdict("failure", "provider refused: content policy"),
    ),
    (
        "engine error",
        EngineResult(stop="error", error="HTTP 500 from the provider"),
        NONE,
        None,
        Verdict("failure", "HTTP 500 from the provider"),
    ),
    (
        "engine error without words",
        EngineResult(stop="error"),
        NONE,
        None,
        Verdict("failure", "the engine failed"),
    ),
    (
        "finished without a result",
        EngineResult(stop="finished"),
        NONE,
        None,
        Verdict("failure", "the engine reported finished without the model's result"),
    ),
    (
        "stopped talking, a finish object does not help",
        EngineResult(stop="no_finish", finish=_finish().finish),
        NONE,
        None,
        Verdict("failure", "the model stopped without calling finish"),
    ),
]


@pytest.mark.parametrize(
    ("result", "requires", "changed", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_outcome_rules(
    result: EngineResult, requires: SkillRequires, changed: bool | None, expected: Verdict
) -> None:
    assert (
        judge(result, requires=requires, exit_codes=CODES, changed=changed, limits=LIMITS)
        == expected
    )


def test_an_error_is_one_bounded_line_without_secret_looking_words() -> None:
    result = EngineResult(stop="error", error="bad\nkey ghp_" + "a" * 36 + " " + "x" * 900)
    verdict = judge(result, requires=NONE, exit_codes={}, changed=None, limits=LIMITS)
    assert verdict.error is not None
    assert "\n" not in verdict.error
    assert "ghp_" not in verdict.error
    assert len(verdict.error) <= 500


def test_the_manifest_carries_the_verdict_and_the_engines_report() -> None:
    result = EngineResult(
        stop="finished",
        finish=Finish(status="needs_human", summary="?", question={"id": "q", "text": "Which?"}),  # type: ignore[arg-type]
        usage=Usage(input_tokens=7, output_tokens=3),
        turns=4,
        model="m-1",
        engine_version="2",
    )
    verdict = judge(result, requires=NONE, exit_codes={}, changed=None, limits=LIMITS)
    manifest = manifest_for(
        verdict, result, agent="holon", version="0.1.0", engine="builtin", requests=2
    )
    assert manifest.status == "completed"
    assert manifest.outcome == "needs_human"
    assert manifest.question is not None
    assert manifest.question.text == "Which?"
    assert manifest.metadata.engine is not None
    assert manifest.metadata.engine.model == "m-1"
    data = manifest.model_dump(mode="json")
    assert data["metadata"]["turns"] == 4
    assert data["metadata"]["usage"] == {"input_tokens": 7, "output_tokens": 3, "requests": 2}
    assert data["metadata"]["engine"]["name"] == "builtin"


def test_a_failed_manifest_is_status_failed() -> None:
    manifest = manifest_for(Verdict("failure", "x"), None, agent="holon", version="0", engine="e")
    assert (manifest.status, manifest.outcome, manifest.error) == ("failed", "failure", "x")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(300, "5m"), (90, "1m30s"), (5400, "1h30m"), (3600, "1h"), (12.5, "12.5s")],
)
def test_durations_read_as_a_spec_writes_them(seconds: float, shown: str) -> None:
    assert human_duration(seconds) == shown
