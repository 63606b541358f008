"""One recorded request to a fake GitHub, for counting the API calls an effect makes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # without the API prefix and the query
    operation: str | None  # GitHub's operation id; None for a route GitHub does not have
    query: dict[str, list[str]] = field(default_factory=dict)
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class CallLog:
    """Calls in the order they arrived, with the counting helpers tests use."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.violations: list[str] = []

    def count(self, operation: str | None = None) -> int:
        """How many calls reached `operation` (every call with None)."""
        return sum(1 for c in self.calls if operation is None or c.operation == operation)

    def operations(self) -> list[str | None]:
        return [c.operation for c in self.calls]

    def last(self, operation: str) -> Call:
        found = [c for c in self.calls if c.operation == operation]
        assert found, f"no call to {operation}; calls: {self.operations()}"
        return found[-1]

    def assert_clean(self) -> None:
        """Fail the test that sent a request GitHub (or the fake) would not answer."""
        assert not self.violations, "requests GitHub's REST API would not answer:\n" + "\n".join(
            self.violations
        )
