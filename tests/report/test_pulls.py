"""Which of Holon's pull requests a timer tick reads (a bounded few, least recently read first,
never one seen ended) and what a read records (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from holon.report.pulls import PER_TICK, Watched, due, observed
from holon.state.model import Record, ServeState, merge

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def _memory(subject: str, prs: Any) -> Record:
    data = {"subject": subject, "prs": prs}
    return Record(kind="memory", key=subject, updated_at=NOW, writer="w", data=data)


def test_due_skips_ended_ones_and_reads_the_least_recently_read_first() -> None:
    state = ServeState()
    state.put(_memory("issue:1", [5, 6]))
    state.put(_memory("issue:2", [7, "8", True]))  # a restored state: odd items left out
    seen_open, _ = observed(Watched(5, "issue:1", ""), state="open", merged=False, at=None,
                            now=NOW, writer="w")  # fmt: skip
    ended, entry = observed(Watched(6, "issue:1", ""), state="closed", merged=True,
                            at="2026-11-22T10:00:00Z", now=NOW, writer="w")  # fmt: skip
    state.put(seen_open)
    state.put(ended)
    assert [(w.number, w.subject) for w in due(state)] == [(7, "issue:2"), (5, "issue:1")]
    assert [w.number for w in due(state, limit=1)] == [7]
    assert entry == {
        "id": "pr:6:merged",
        "at": NOW.isoformat(),
        "pr_merged": {"number": 6, "subject": "issue:1", "state": "merged",
                      "at": "2026-11-22T10:00:00Z"},
    }  # fmt: skip
    assert (ended.status, ended.rank) == ("done", 2)


def test_due_is_bounded_per_tick() -> None:
    state = ServeState()
    state.put(_memory("issue:1", list(range(1, 40))))
    assert len(due(state)) == PER_TICK


def test_an_ended_record_wins_a_merge_over_an_open_one_read_later() -> None:
    watched = Watched(9, "issue:1", "")
    ended, _ = observed(watched, state="closed", merged=False, at=None, now=NOW, writer="a")
    later = NOW + timedelta(hours=1)
    still, none = observed(watched, state="open", merged=False, at=None, now=later, writer="b")
    assert none is None
    a, b = ServeState(), ServeState()
    a.put(ended)
    b.put(still)
    assert merge(a, b).records["meta:pull:9"].data["state"] == "closed"
    assert ended.data["at"] == NOW.isoformat()  # no time from GitHub: the tick's
