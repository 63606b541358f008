"""Journals: append/read, batches, rotation, torn lines, ids and the union of two journals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holon.state.journal import CorruptJournal, Journal, merge_journal_entries


def entries(n: int, *, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"id": f"e{i:04d}", "at": f"2026-01-01T00:00:{i % 60:02d}Z", "n": f"{i:04d}"}
        for i in range(start, start + n)
    ]


def test_append_read_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    with Journal(path) as journal:
        assert list(journal.read()) == []
        journal.append({"id": "a", "text": "héllo\nworld", "nested": {"z": 1, "a": [1, 2]}})
        journal.append_many(entries(3))
        journal.append_many([])
        got = list(journal.read())
    assert got[0] == {"id": "a", "text": "héllo\nworld", "nested": {"z": 1, "a": [1, 2]}}
    assert got[1:] == entries(3)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    assert lines[0] == '{"id":"a","nested":{"a":[1,2],"z":1},"text":"héllo\\nworld"}'


def test_handle_stays_open_and_reopens_after_close(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.ndjson", fsync=False)
    journal.append({"id": "1"})
    fd = journal._fd
    journal.append({"id": "2"})
    assert journal._fd == fd
    journal.close()
    journal.close()  # idempotent
    journal.append({"id": "3"})
    journal.close()
    assert [e["id"] for e in Journal(tmp_path / "j.ndjson").read()] == ["1", "2", "3"]


@pytest.mark.parametrize(
    "entry", [{}, {"id": 3}, {"id": ""}, {"id": None, "x": 1}], ids=["none", "int", "empty", "null"]
)
def test_entries_without_a_string_id_are_refused(tmp_path: Path, entry: dict[str, Any]) -> None:
    path = tmp_path / "j.ndjson"
    with Journal(path) as journal:
        with pytest.raises(ValueError, match="string 'id'"):
            journal.append(entry)
        with pytest.raises(ValueError, match="string 'id'"):
            journal.append_many([{"id": "ok"}, entry])  # nothing of a bad batch is written
    assert not path.exists() or path.read_bytes() == b""


def test_rotation_keeps_at_most_keep_files_and_reads_in_order(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    line = len(json.dumps(entries(1)[0], separators=(",", ":"))) + 1
    with Journal(path, max_bytes=3 * line, keep=2, fsync=False) as journal:
        for entry in entries(20):
            journal.append(entry)
        got = list(journal.read())
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "events.ndjson",
        "events.ndjson.1",
        "events.ndjson.2",
    ]
    # Each file holds 3 lines; 20 entries fill files of 3,3,...,2: the newest 8 remain.
    assert got == entries(8, start=12)
    assert all(p.stat().st_size <= 3 * line for p in tmp_path.iterdir())


def test_rotation_with_keep_zero_drops_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "a.ndjson"
    with Journal(path, max_bytes=1, keep=0, fsync=False) as journal:
        journal.append_many(entries(2))
        journal.append({"id": "last"})
        assert [e["id"] for e in journal.read()] == ["last"]
    assert [p.name for p in tmp_path.iterdir()] == ["a.ndjson"]


def test_oversized_batch_goes_into_a_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "a.ndjson"
    with Journal(path, max_bytes=50, keep=3, fsync=False) as journal:
        journal.append({"id": "first"})
        journal.append_many(entries(5))  # larger than max_bytes on its own: never split
        assert [e["id"] for e in journal.read()] == ["first", *(e["id"] for e in entries(5))]
    assert (tmp_path / "a.ndjson.1").read_text() == '{"id":"first"}\n'


def test_torn_last_line_is_skipped_then_cut_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    path.write_bytes(b'{"id":"a"}\n{"id":"b"}\n{"id":"c","te')
    journal = Journal(path)
    assert [e["id"] for e in journal.read()] == ["a", "b"]
    journal.append({"id": "d"})
    journal.close()
    assert path.read_bytes() == b'{"id":"a"}\n{"id":"b"}\n{"id":"d"}\n'


def test_complete_json_without_its_newline_is_still_torn(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    path.write_bytes(b'{"id":"a"}\n{"id":"b"}')
    assert [e["id"] for e in Journal(path).read()] == ["a"]


def test_corrupt_last_line_with_newline_is_skipped_in_every_file(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    (tmp_path / "j.ndjson.1").write_bytes(b'{"id":"old"}\n\x00\x00\x00\n')
    path.write_bytes(b'{"id":"a"}\n\n[1]\n')
    assert [e["id"] for e in Journal(path).read()] == ["old", "a"]


def test_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    path.write_bytes(b'{"id":"a"}\nnot json\n{"id":"c"}\n')
    with pytest.raises(CorruptJournal, match=r"j\.ndjson line 2"):
        list(Journal(path).read())


def test_merge_journal_entries_unions_by_id() -> None:
    a = [{"id": "x", "at": "2026-01-02"}, {"id": "y", "at": "2026-01-01"}]
    b = [{"id": "y", "at": "2026-01-01"}, {"id": "z", "at": "2026-01-01"}, {"id": "w"}]
    merged = merge_journal_entries(a, b)
    assert [e["id"] for e in merged] == ["w", "y", "z", "x"]
    assert merge_journal_entries(b, a) == merged
    assert merge_journal_entries(a, a) == sorted(a, key=lambda e: (e["at"], e["id"]))


def test_merge_journal_entries_resolves_conflicts_independently_of_order() -> None:
    left, right = [{"id": "x", "v": 2}], [{"id": "x", "v": 1}]
    assert merge_journal_entries(left, right) == merge_journal_entries(right, left) == right
    with pytest.raises(ValueError, match="string 'id'"):
        merge_journal_entries([{"at": "t"}], [])
