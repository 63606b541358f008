"""redact_record: every string of the record, keys included; the record stays valid."""

from __future__ import annotations

from datetime import UTC, datetime

from holon.contract.layout import AgentExit
from holon.contract.manifest import Manifest
from holon.runner.record import PatchInfo, RunResult
from holon.runner.redaction import redact_record
from holon.secrets import Redactor


def _result(**kw: object) -> RunResult:
    now = datetime.now(UTC)
    fields: dict[str, object] = {
        "run_id": "r1",
        "runtime": "local",
        "status": "failed",
        "outcome": "failure",
        "exit_code": AgentExit.FAILURE,
        "reason": "the agent reported failure: boom ghp_recordSecret123",
        "agent_exit_code": 1,
        "output_path": "/out",
        "manifest_path": "/out/manifest.json",
        "manifest": Manifest.model_validate(
            {
                "status": "failed",
                "outcome": "failure",
                "error": "boom ghp_recordSecret123",
                "ghp_recordSecret123": {"nested": ["x ghp_recordSecret123"]},
            }
        ),
        "snapshot": None,
        "patch": PatchInfo(path=None, source="runner", bytes=0),
        "started_at": now,
        "ended_at": now,
        "duration_seconds": 0.0,
    }
    fields.update(kw)
    return RunResult.model_validate(fields)


def test_values_keys_and_nested_strings_are_redacted_and_named() -> None:
    redacted = redact_record(_result(), {"TOKEN": Redactor(["ghp_recordSecret123"])})
    text = redacted.model_dump_json()
    assert "ghp_recordSecret123" not in text
    assert redacted.reason == "the agent reported failure: boom ***"
    assert redacted.manifest is not None
    assert redacted.manifest.model_extra == {"***": {"nested": ["x ***"]}}
    assert redacted.secrets_redacted == ["TOKEN"]


def test_a_secret_equal_to_a_fixed_word_keeps_the_record_valid() -> None:
    redacted = redact_record(_result(reason="runner said runner"), {"ODD": Redactor(["runner"])})
    assert redacted.patch is not None
    assert redacted.patch.source == "runner"
    assert redacted.reason == "*** said ***"


def test_no_secrets_no_change() -> None:
    result = _result()
    assert redact_record(result, {}) is result
