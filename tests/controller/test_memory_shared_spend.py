"""A memory or attempt without spend shares one frozen `Spend()`: the same values and dumps as a
fresh one, and a dump that leaves defaults out validates no new Spend per field it compares."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from holon.controller.memory import NO_SPEND, Attempt, SubjectMemory
from holon.controller.memory_record import memory_data
from holon.spend import Spend

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _memory() -> SubjectMemory:
    attempt = Attempt(at=AT, intent_id="i1", type="run_skill", outcome="success")
    return SubjectMemory(subject="issue:1", recent=[attempt, attempt], decisions=3)


def test_the_shared_default_is_a_fresh_spend() -> None:
    assert Spend() == NO_SPEND
    assert NO_SPEND.model_dump() == Spend().model_dump()
    assert _memory().spend == Spend()
    assert _memory().recent[0].spend == Spend()
    # Frozen: no holder can change the value the others share.
    with pytest.raises(ValueError, match="frozen"):
        NO_SPEND.input_tokens = 1  # type: ignore[misc]


def test_dumps_leave_the_shared_default_out_as_they_left_a_fresh_one() -> None:
    memory = _memory()
    assert memory_data(memory) == {
        "subject": "issue:1",
        "recent": [
            {
                "at": "2026-01-01T00:00:00Z",
                "intent_id": "i1",
                "type": "run_skill",
                "outcome": "success",
            },
        ]
        * 2,
        "decisions": 3,
    }
    # A spend given explicitly, equal to none, is left out too (compared by value).
    explicit = memory.model_copy(update={"spend": Spend()})
    assert memory_data(explicit) == memory_data(memory)
    spent = memory.model_copy(update={"spend": Spend(input_tokens=5)})
    assert memory_data(spent)["spend"] == {"input_tokens": 5}


def test_a_dump_validates_no_new_spend(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = _memory()
    made: list[dict[str, Any]] = []
    original = Spend.__init__

    def counted(self: Spend, **values: Any) -> None:
        made.append(values)
        original(self, **values)

    monkeypatch.setattr(Spend, "__init__", counted)
    memory_data(memory)
    SubjectMemory(subject="issue:2")
    assert made == []
