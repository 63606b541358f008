"""GitHub's real webhook examples (tests/fixtures/octokit-webhooks, MIT, Octokit contributors)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "octokit-webhooks"


@cache
def examples() -> dict[str, list[dict[str, Any]]]:
    data = json.loads((FIXTURES / "examples.json").read_text())
    return {entry["name"]: entry["examples"] for entry in data}


@cache
def schema() -> dict[str, Any]:
    return json.loads((FIXTURES / "schema.json").read_text())


def example(event: str, action: str | None = None) -> dict[str, Any]:
    """A private copy of GitHub's example for event.action. The examples have no `issues.closed`;
    for it the `issues.reopened` payload (same shape) is used with its action changed."""
    stand_in = {("issues", "closed"): "reopened"}
    wanted = stand_in.get((event, action), action)
    for payload in examples()[event]:
        if wanted is None or payload.get("action") == wanted:
            copy: dict[str, Any] = json.loads(json.dumps(payload))
            if action is not None:
                copy["action"] = action
            return copy
    raise LookupError(f"no example for {event}.{action}")
