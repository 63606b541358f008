"""holon/executor/result.py: an ActionResult is one line of actions.ndjson; it reads back as it
was written (serve rebuilds what it executed from that journal) and refuses what it is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from holon.executor.result import ActionResult
from holon.state.journal import Journal
from tests.executor.conftest import AT

FULL: dict[str, Any] = {
    "id": "act_1:2",
    "intent_id": "act_1",
    "type": "run_skill",
    "subject": "issue:1",
    "attempt": 2,
    "status": "succeeded",
    "dry_run": False,
    "effect": {"effect": "run_skill", "inputs": {"issue": "1"}, "head_sha": None},
    "output": {
        "url": "https://github.com/Codertocat/Hello-World/pull/2",
        "number": 2,
        "comment_id": None,
        "check_run_id": 128620228,
        "sha": None,
    },
    "run_id": "act_1-2",
    "run_output_path": "/state/runs/act_1-2",
    "manifest_path": "/state/runs/act_1-2/manifest.json",
    "run_status": "completed",
    "run_outcome": "needs_human",
    "question": {"id": "q-db", "text": "Which database?"},
    "usage": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0081, "unpriced_tokens": 0},
    "usage_source": "host",
    "error": None,
    "at": "2026-11-21T12:00:00Z",
}


def test_a_result_reads_back_from_its_journal_line_unchanged(tmp_path: Path) -> None:
    result = ActionResult.model_validate(FULL)
    assert result.at == AT
    assert result.question is not None
    assert result.question.text == "Which database?"
    assert result.output is not None
    assert (result.output.number, result.output.check_run_id) == (2, 128620228)
    journal = Journal(tmp_path / "actions.ndjson", fsync=False)
    journal.append(result.model_dump(mode="json"))
    journal.close()
    (line,) = Journal(tmp_path / "actions.ndjson", fsync=False).read()
    assert line == FULL
    assert ActionResult.model_validate(line) == result
    assert ActionResult.model_validate_json(result.model_dump_json()) == result


def test_a_minimal_result_takes_the_defaults() -> None:
    minimal = {k: FULL[k] for k in ("id", "intent_id", "type", "subject", "attempt", "at")}
    result = ActionResult.model_validate({**minimal, "status": "failed", "error": "no handler"})
    assert (result.dry_run, result.effect, result.output, result.run_id, result.question) == (
        False,
        None,
        None,
        None,
        None,
    )


BAD = {
    "unknown_field": ({"retries": 3}, "retries"),
    "unknown_status": ({"status": "done"}, "status"),
    "naive_time": ({"at": "2026-11-21T12:00:00"}, "at"),
    "not_a_time": ({"at": "yesterday"}, "at"),
    "attempt_not_a_number": ({"attempt": "second"}, "attempt"),
    "effect_not_an_object": ({"effect": ["merge"]}, "effect"),
    "question_without_text": ({"question": {"id": "q"}}, "question.text"),
    "question_with_extra_field": ({"question": {"id": "q", "text": "?", "x": 1}}, "question.x"),
    "output_with_unknown_field": ({"output": {"html": "x"}}, "output.html"),
    "output_number_not_a_number": ({"output": {"number": "two"}}, "output.number"),
}


@pytest.mark.parametrize(("change", "where"), BAD.values(), ids=BAD.keys())
def test_a_bad_result_is_refused_naming_the_field(change: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as caught:
        ActionResult.model_validate({**FULL, **change})
    locations = [".".join(map(str, e["loc"])) for e in caught.value.errors()]
    assert locations == [where]


@pytest.mark.parametrize("field", ["id", "intent_id", "type", "subject", "attempt", "status", "at"])
def test_a_result_missing_a_required_field_is_refused(field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        ActionResult.model_validate({k: v for k, v in FULL.items() if k != field})


def test_a_result_cannot_be_changed_after_the_fact() -> None:
    result = ActionResult.model_validate(FULL)
    with pytest.raises(ValidationError, match="frozen"):
        result.status = "failed"  # type: ignore[misc]
    assert json.loads(result.model_dump_json())["status"] == "succeeded"
