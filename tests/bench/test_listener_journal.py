"""bench.listener counts what serve journaled from every segment of the events journal: serve
rotates it by size, so a long run's early deliveries are in `events.ndjson.<n>`."""

from __future__ import annotations

from pathlib import Path

from bench.listener import _journaled
from holon.state.journal import Journal


def test_the_journaled_count_reads_every_rotated_segment(tmp_path: Path) -> None:
    ids = [f"evt-{i}" for i in range(40)]
    with Journal(tmp_path / "events.ndjson", max_bytes=200, fsync=False) as journal:
        for event_id in ids:
            journal.append({"id": event_id, "type": "github.issues.opened"})
        assert len(journal.segments()) > 3  # rotated: most ids are in older segments
    # A line being written as the bench reads (no newline yet) is not counted yet.
    with (tmp_path / "events.ndjson").open("a") as current:
        current.write('{"id":"evt-torn"')
    assert _journaled(tmp_path) == set(ids)


def test_no_journal_yet_is_nothing_journaled(tmp_path: Path) -> None:
    assert _journaled(tmp_path / "state") == set()
