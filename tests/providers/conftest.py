"""Fakes for the providers' tests: time that passes only when the code sleeps, the documented
answer bodies, keys that must never show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holon.agent.providers.http import JsonHttp, RetryPolicy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"
ANTHROPIC_KEY = "sk-ant-api03-TESTKEYmustNEVERshow0123456789abcdefXYZ"
OPENAI_KEY = "sk-proj-TESTKEYmustNEVERshow0123456789abcdefXYZ"


def bodies(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


class FakeTime:
    """A monotonic clock and a wall clock that advance only when `sleep` is called, which
    records each wait."""

    EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z

    def __init__(self) -> None:
        self.elapsed = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.elapsed += seconds

    def clock(self) -> float:
        return 500.0 + self.elapsed

    def now(self) -> float:
        return self.EPOCH + self.elapsed

    def http(self, provider: str, **policy: Any) -> JsonHttp:
        """A JsonHttp on this time with jitter fixed at its top (each backoff is the full
        doubled delay), so the waits are exact."""
        return JsonHttp(
            provider,
            policy=RetryPolicy(**policy),
            sleep=self.sleep,
            clock=self.clock,
            now=self.now,
            jitter=lambda: 1.0,
        )


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()
