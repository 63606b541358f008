from __future__ import annotations

import json

import pytest

from holon.cli.main import main
from holon.closure.lifecycle import CANONICAL, PHASES, resolve
from holon.errors import InvalidInput


@pytest.mark.parametrize("value", CANONICAL)
def test_canonical_values_are_kept(value: str) -> None:
    assert resolve(value).lifecycle_outcome == value
    assert resolve(value.upper()).lifecycle_outcome == value


@pytest.mark.parametrize(
    ("value", "question", "expected"),
    [
        ("finish", None, "finished"),
        ("complete", None, "finished"),
        ("completed", None, "finished"),
        ("done", None, "finished"),
        ("DONE", None, "finished"),
        ("blocked_on_user", "q-1", "askuserQuestion"),
        ("blocked_on_user", None, "userinterlude"),
    ],
)
def test_legacy_values(value: str, question: str | None, expected: str) -> None:
    for field in ("lifecycle_outcome", "run_outcome"):
        result = resolve(**{field: value, "question_id": question})
        assert result.lifecycle_outcome == expected
        assert result.source == field


@pytest.mark.parametrize("value", ["cancelled", "canceled", "abort", "aborted"])
def test_cancelled_is_internal_only(value: str) -> None:
    result = resolve(run_outcome=value)
    assert result.lifecycle_outcome is None
    assert result.internal == "cancelled"
    assert "not a user-facing outcome" in result.note


def test_precedence() -> None:
    assert resolve("failed", "done", "done").lifecycle_outcome == "failed"
    assert resolve("failed", "done", "done").source == "lifecycle_outcome"
    assert resolve(None, "done", "blocked").lifecycle_outcome == "finished"
    assert resolve(None, "done", "blocked").source == "run_outcome"
    assert resolve(None, None, "blocked").lifecycle_outcome == "blocked"
    assert resolve(None, None, "blocked").source == "current_phase"
    assert resolve().source == "none"


@pytest.mark.parametrize(
    ("phase", "question", "expected", "terminal"),
    [
        ("planning", None, None, False),
        ("executing", None, None, False),
        ("verifying", None, None, False),
        ("awaiting_user", "q", "askuserQuestion", True),
        ("awaiting_user", None, "userinterlude", True),
        ("blocked", None, "blocked", True),
        ("failed", None, "failed", True),
        ("done", None, "finished", True),
        ("cancelled", None, None, True),
    ],
)
def test_phase_inference(
    phase: str, question: str | None, expected: str | None, terminal: bool
) -> None:
    result = resolve(current_phase=phase, question_id=question)
    assert (result.lifecycle_outcome, result.terminal) == (expected, terminal)


def test_phase_table_fully_covered() -> None:
    assert set(PHASES) == {
        "planning",
        "executing",
        "verifying",
        "awaiting_user",
        "blocked",
        "failed",
        "done",
        "cancelled",
    }


@pytest.mark.parametrize(
    "kwargs",
    [{"lifecycle_outcome": "success"}, {"run_outcome": "ok"}, {"current_phase": "thinking"}],
)
def test_unknown_values_are_errors_never_success(kwargs: dict[str, str]) -> None:
    with pytest.raises(InvalidInput, match="unknown"):
        resolve(**kwargs)


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lifecycle", "normalize", "blocked_on_user", "--question-id", "q1"]) == 0
    assert json.loads(capsys.readouterr().out)["lifecycle_outcome"] == "askuserQuestion"
    assert main(["lifecycle", "normalize", "--phase", "awaiting_user"]) == 0
    assert json.loads(capsys.readouterr().out)["lifecycle_outcome"] == "userinterlude"
    assert main(["lifecycle", "normalize", "successful"]) == 64
    err = capsys.readouterr().err.strip()
    assert err.startswith("holon: error: unknown lifecycle_outcome value 'successful'")
    assert main(["lifecycle", "normalize"]) == 64
