"""What a skill run spent on its model, read after the run (docs/budgets.md).

The runner's own record comes first: `run.json`'s `model_usage` ({input_tokens, output_tokens,
requests, model}) is what the host measured of the model's answers (the key proxy meters them),
so it is trusted. Without it (a local run, an older runner) the agent's own running total,
`evidence/usage.json` in the run's output, is read instead and marked self-reported: the agent
could write anything there, so it is opened without following a link, read bounded, and held
to a sane range; a file that is none of that gives no usage at all rather than a guess.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from holon.errors import InvalidInput
from holon.fsutil import NotRegular, open_dir, read_regular_at
from holon.jsonio import load_object
from holon.spend import Spend

# Where the agent's recorder keeps its running total (holon/agent/recorder.py).
EVIDENCE_USAGE = "evidence/usage.json"
MAX_USAGE_BYTES = 4096  # a handful of numbers
# More tokens than any run could spend is not a count: a self-report past it is refused.
MAX_TOKENS = 10**12
MAX_MODEL = 200

Source = Literal["host", "agent"]


@dataclass(frozen=True)
class RunUsage:
    input_tokens: int
    output_tokens: int
    requests: int | None
    model: str | None
    source: Source  # host: measured by the runner; agent: the agent's own word


# Prices a run's tokens (the policy's table applied: controller/pricing.spend_of).
Pricer = Callable[[int, int, str | None], Spend]


def unpriced(input_tokens: int, output_tokens: int, model: str | None) -> Spend:
    """No price table given: every token unpriced, never free."""
    total = input_tokens + output_tokens
    return Spend(input_tokens=input_tokens, output_tokens=output_tokens, unpriced_tokens=total)


def _count(data: dict[str, Any], name: str) -> int | None:
    value = data.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


def _model(value: Any) -> str | None:
    if not isinstance(value, str) or not value or len(value) > MAX_MODEL:
        return None
    return value if value.isprintable() else None


def usage_of(data: Any, source: Source, model: str | None = None) -> RunUsage | None:
    """The usage in `data` (a JSON object), or None when it is not one Holon can trust."""
    if not isinstance(data, dict):
        return None
    inputs, outputs = _count(data, "input_tokens"), _count(data, "output_tokens")
    requests = _count(data, "requests")
    if inputs is None or outputs is None:
        return None
    named = _model(data.get("model")) or _model(model)
    return RunUsage(inputs, outputs, requests, named, source)


def read_self_reported(output: Path) -> RunUsage | None:
    """The agent's `evidence/usage.json` under `output`, read as untrusted (module docstring)."""
    try:
        fd = open_dir(output) if not output.is_symlink() else None
    except OSError:
        return None
    if fd is None:
        return None
    try:
        raw = read_regular_at(fd, EVIDENCE_USAGE, MAX_USAGE_BYTES)
        return usage_of(load_object(raw, EVIDENCE_USAGE), "agent")
    except (OSError, NotRegular, InvalidInput):
        return None
    finally:
        os.close(fd)


def manifest_model(result: Any) -> str | None:
    """The model the agent said it used (its manifest's engine metadata)."""
    manifest = getattr(result, "manifest", None)
    engine = getattr(getattr(manifest, "metadata", None), "engine", None)
    return _model(getattr(engine, "model", None))


def run_usage(result: Any, output: Path | None) -> RunUsage | None:
    """A run's usage: the runner's `model_usage` when its record has one, else the agent's
    self-report under `output` (None: neither)."""
    measured: Any = getattr(result, "model_usage", None)
    if isinstance(measured, BaseModel):
        measured = measured.model_dump()
    if measured is not None:
        found = usage_of(measured, "host")
        if found is not None:
            return found
    if output is None:
        return None
    found = read_self_reported(output)
    if found is not None and found.model is None:
        found = RunUsage(
            found.input_tokens, found.output_tokens, found.requests, manifest_model(result), "agent"
        )
    return found


def spend_of_run(usage: RunUsage | None, price: Pricer | None) -> Spend | None:
    if usage is None:
        return None
    return (price or unpriced)(usage.input_tokens, usage.output_tokens, usage.model)


__all__ = [
    "EVIDENCE_USAGE",
    "MAX_TOKENS",
    "Pricer",
    "RunUsage",
    "manifest_model",
    "read_self_reported",
    "run_usage",
    "spend_of_run",
    "unpriced",
    "usage_of",
]
