"""Forwarded secrets out of the run record: every string in it, keys included, is redacted.

The record quotes the agent (its manifest's error and question, the reason built from them,
notes naming its files), so the agent could otherwise carry a secret it was given into `run.json`,
the CLI summary, `--json` and the journals that copy the record.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from holon.runner.record import RunResult
from holon.secrets import Redactor


def _walk(value: Any, redact: Redactor, seen: set[str], secrets: dict[str, Redactor]) -> Any:
    if isinstance(value, str):
        for name, single in secrets.items():
            if name not in seen and single.found_in(value.encode("utf-8", "surrogatepass")):
                seen.add(name)
        return redact(value)
    if isinstance(value, dict):
        return {
            _walk(k, redact, seen, secrets): _walk(v, redact, seen, secrets)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_walk(item, redact, seen, secrets) for item in value]
    return value


def redact_record(result: RunResult, secrets: dict[str, Redactor]) -> RunResult:
    """`result` with every forwarded secret value replaced, naming the secrets that were found."""
    if not secrets:
        return result
    combined = Redactor()
    for single in secrets.values():
        for value in single.values:
            combined.add(value)
    seen: set[str] = set()
    original = result.model_dump(mode="json")
    data = _walk(original, combined, seen, secrets)
    data["secrets_redacted"] = sorted(seen)
    for _ in range(20):
        try:
            return RunResult.model_validate(data)
        except ValidationError as exc:
            # A "secret" equal to a fixed word of the record (a status, a source) is no secret
            # there: the field keeps its value rather than the record becoming invalid.
            for error in exc.errors():
                _restore(data, original, error["loc"])
    return result.model_copy(update={"secrets_redacted": sorted(seen)})


def _restore(data: Any, original: Any, loc: tuple[int | str, ...]) -> None:
    for key in loc[:-1]:
        data, original = data[key], original[key]
    data[loc[-1]] = original[loc[-1]]
