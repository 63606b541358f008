"""Journals: append/read, batches, rotation (kept, bounded, killed midway), torn lines, ids and
the union of two journals."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from holon.errors import InvalidInput
from holon.state import journal as journal_module
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


def _line_bytes() -> int:
    return len(json.dumps(entries(1)[0], separators=(",", ":"))) + 1


def _file(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_text().splitlines()]


def test_rotation_by_default_keeps_every_line(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    line = _line_bytes()
    with Journal(path, max_bytes=3 * line, fsync=False) as journal:
        for entry in entries(200):
            journal.append(entry)
        got = list(journal.read())
        segments = journal.segments()
        assert journal.dropped() == []
    assert got == entries(200)
    # 3 lines a file: 66 full segments, numbered oldest first, and 2 lines still being written.
    assert [p.name for p in segments] == [f"events.ndjson.{n}" for n in range(1, 67)]
    assert [e["id"] for e in _file(segments[0])] == ["e0000", "e0001", "e0002"]
    assert [e["id"] for e in _file(path)] == ["e0198", "e0199"]
    assert len(list(tmp_path.iterdir())) == 67
    assert all(p.stat().st_size <= 3 * line for p in tmp_path.iterdir())


def test_rotation_renames_and_never_rewrites_a_segment(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    with Journal(path, max_bytes=2 * _line_bytes(), fsync=False) as journal:
        journal.append_many(entries(2))
        journal.append_many(entries(2, start=2))
        first = (tmp_path / "j.ndjson.1").read_bytes()
        inode = (tmp_path / "j.ndjson.1").stat().st_ino
        journal.append_many(entries(10, start=4))
    assert (tmp_path / "j.ndjson.1").read_bytes() == first
    assert (tmp_path / "j.ndjson.1").stat().st_ino == inode
    assert [e["id"] for e in _file(tmp_path / "j.ndjson.1")] == ["e0000", "e0001"]


def test_segments_are_ordered_by_number_and_nothing_else_counts(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    for name, ident in [("j.ndjson.10", "ten"), ("j.ndjson.2", "two"), ("j.ndjson.9", "nine")]:
        (tmp_path / name).write_text(json.dumps({"id": ident}) + "\n")
    for stray in ("j.ndjson.01", "j.ndjson.tmp", "j.ndjson.3.bak", "k.ndjson.1", "j.ndjson.0"):
        (tmp_path / stray).write_text(json.dumps({"id": stray}) + "\n")
    path.write_text(json.dumps({"id": "now"}) + "\n")
    journal = Journal(path)
    assert [p.name for p in journal.segments()] == ["j.ndjson.2", "j.ndjson.9", "j.ndjson.10"]
    assert [e["id"] for e in journal.read()] == ["two", "nine", "ten", "now"]


def test_a_directory_with_a_segments_name_is_refused_not_skipped(tmp_path: Path) -> None:
    # A restored state directory is outside input: whatever holds a segment's name is read as
    # one, so a planted directory (or link, or FIFO) stops the read instead of hiding entries.
    path = tmp_path / "j.ndjson"
    (tmp_path / "j.ndjson.4").mkdir()
    path.write_text(json.dumps({"id": "now"}) + "\n")
    journal = Journal(path)
    assert [p.name for p in journal.segments()] == ["j.ndjson.4"]
    with pytest.raises(InvalidInput, match="not a regular file"):
        list(journal.read())


def _accounted(journal: Journal, total: int, *, exact: bool = True) -> list[dict[str, Any]]:
    """The markers, checked to account, with what is kept, for every entry ever appended: each
    once (`exact`), or at least once (a kill between marking a segment and deleting it)."""
    ids = [e["id"] for e in entries(total)]
    kept = [e["id"] for e in journal.read()]
    markers = [m["journal_dropped"] for m in journal.dropped()]
    marked: list[str] = []
    for marker in markers:
        if marker["entries"]:
            first = ids.index(marker["first_id"])
            marked += ids[first : first + marker["entries"]]
            assert marked[-1] == marker["last_id"]
    assert len(kept) == len(set(kept))
    assert kept == ids[total - len(kept) :]
    assert set(marked) | set(kept) == set(ids)
    if exact:
        assert marked + kept == ids
    return markers


def test_a_keep_bound_drops_the_oldest_segments_and_records_each(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    with Journal(path, max_bytes=10 * _line_bytes(), keep=2, fsync=False) as journal:
        for entry in entries(100):
            journal.append(entry)
        segments = [p.name for p in journal.segments()]
        markers = _accounted(journal, 100)
    # Two segments are kept, the newest ones; every older one left a marker naming it.
    numbers = [int(name.rpartition(".")[2]) for name in segments]
    assert len(numbers) == 2
    assert numbers[0] + 1 == numbers[1]
    assert [m["segment"] for m in markers] == [f"events.ndjson.{n}" for n in range(1, numbers[0])]
    assert markers[0] == {
        "segment": "events.ndjson.1",
        "entries": 10,
        "bytes": 10 * _line_bytes(),
        "first_id": "e0000",
        "last_id": "e0009",
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["events.ndjson", *segments])


def test_markers_outlive_the_segments_that_held_them(tmp_path: Path) -> None:
    path = tmp_path / "a.ndjson"
    with Journal(path, max_bytes=1, keep=1, fsync=False) as journal:
        for entry in entries(30):
            journal.append(entry)
        markers = _accounted(journal, 30)
    # One entry a file: 28 files deleted, e0028 kept, e0029 being written.
    assert len(markers) == 28
    # Segment 1's marker went into file 2, long deleted: it moved on with each file deleted.
    assert markers[0]["segment"] == "a.ndjson.1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ndjson", "a.ndjson.29"]
    assert _file(path)[-1] == entries(1, start=29)[0]


def test_keep_one_records_each_dropped_file(tmp_path: Path) -> None:
    path = tmp_path / "a.ndjson"
    with pytest.raises(ValueError, match="keep"):
        Journal(path, keep=0)
    with Journal(path, max_bytes=1, keep=1, fsync=False) as journal:
        journal.append_many(entries(2))
        journal.append({"id": "second"})
        journal.append({"id": "last"})
        assert [e["id"] for e in journal.read()] == ["second", "last"]
        (marker,) = journal.dropped()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ndjson", "a.ndjson.2"]
    assert marker["journal_dropped"] == {
        "segment": "a.ndjson.1",
        "entries": 2,
        "bytes": 2 * _line_bytes(),
        "first_id": "e0000",
        "last_id": "e0001",
    }
    # The marker line comes first in the new file, before the entry whose write rotated.
    assert _file(path) == [marker, {"id": "last"}]


def test_the_marker_key_is_reserved(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    with Journal(path) as journal:
        with pytest.raises(ValueError, match="reserved key 'journal_dropped'"):
            journal.append({"id": "x", "journal_dropped": {}})
        with pytest.raises(ValueError, match="reserved key 'journal_dropped'"):
            journal.append_many([{"id": "ok"}, {"id": "x", "journal_dropped": {}}])
    assert not path.exists() or path.read_bytes() == b""


class Killed(BaseException):
    """Stands for SIGKILL: nothing after the step runs; what is on disk is what a kill leaves."""


def _kill_at(monkeypatch: pytest.MonkeyPatch, step: str, after: int) -> None:
    owner: Any = {"rename": os, "sync": journal_module, "unlink": Path}[step]
    attr = {"rename": "replace", "sync": "_fsync_dir", "unlink": "unlink"}[step]
    real = getattr(owner, attr)
    calls = [0]

    def killed_after(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > after:
            raise Killed
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, attr, killed_after)


@pytest.mark.parametrize(
    ("keep", "step", "after"),
    [
        (None, "rename", 0),  # killed before the rename
        (None, "sync", 0),  # renamed, killed before the directory is synced
        (1, "rename", 0),
        (1, "sync", 0),
        (1, "sync", 1),  # renamed and marked, killed before the first deletion
        (1, "unlink", 0),  # killed before deleting the first of two doomed segments
        (1, "unlink", 1),  # one of the two deleted
    ],
)
def test_a_kill_mid_rotation_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: int | None, step: str, after: int
) -> None:
    path = tmp_path / "j.ndjson"
    size = 3 * _line_bytes()
    with Journal(path, max_bytes=size, fsync=True) as journal:
        for start in range(0, 12, 3):
            journal.append_many(entries(3, start=start))
    assert len(Journal(path).segments()) == 3
    # The next append rotates; with a bound of 1 that drops two segments at once.
    with monkeypatch.context() as patch:
        _kill_at(patch, step, after)
        dying = Journal(path, max_bytes=size, keep=keep, fsync=True)
        with pytest.raises(Killed):
            dying.append(entries(1, start=12)[0])
        dying.close()
    # A new process on the same directory finds every entry, kept or accounted for by a marker.
    with Journal(path, max_bytes=size, keep=keep, fsync=True) as again:
        _accounted(again, 12, exact=False)
        for entry in entries(8, start=12):
            again.append(entry)
        markers = _accounted(again, 20)
    if keep is None:
        assert markers == []


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


def test_append_verbatim_writes_the_value_as_its_text(tmp_path: Path) -> None:
    """A value written as the JSON text it was read from reads back as the same entry; only the
    spacing and key order inside it are the text's own (serve's replayed payloads)."""
    text = '{"z": 1, "a": ["x", {"k": "caf\\u00e9 \\ud83d\\ude00"}], "s": "\\"}"}'
    value = json.loads(text)
    entry = {"id": "e1", "at": "2026", "envelope": {"b": 1, "payload": "stand-in", "y": "\udcff"}}
    with Journal(tmp_path / "a.ndjson") as encoded, Journal(tmp_path / "b.ndjson") as verbatim:
        encoded.append({**entry, "envelope": {**entry["envelope"], "payload": value}})
        verbatim.append_verbatim(entry, ("envelope", "payload"), text)
        assert list(verbatim.read()) == list(encoded.read())
    line = (tmp_path / "b.ndjson").read_bytes()
    assert text.encode() in line
    assert line.endswith(b"}\n")
    assert line.count(b"\n") == 1
    assert entry["envelope"]["payload"] == "stand-in"  # the caller's entry is left as it was
    assert "\\ufffd" in line.decode() or "\ufffd" in line.decode()  # scrubbed around it


def test_append_verbatim_refuses_what_is_not_one_line(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.ndjson") as journal:
        with pytest.raises(ValueError, match="one line"):
            journal.append_verbatim({"id": "e", "p": 1}, ("p",), '{"a":\n1}')
        with pytest.raises(ValueError, match="non-empty string 'id'"):
            journal.append_verbatim({"p": 1}, ("p",), "1")  # no id: refused as by append
        assert list(journal.read()) == []


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": [1.5, None, True, "é\u2028"], "c": {"z": {}, "y": []}},
        "text",
        [1, 2],
        {"id": "x", "n": 10**30},
    ],
)
def test_dumps_is_json_dumps_with_the_journal_options(value: Any) -> None:
    expected = json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    assert journal_module.dumps(value) == expected


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({"x": float("nan")}, ValueError),
        ({1: "a", "b": 2}, TypeError),  # keys that do not sort
        ({"x": {1, 2}}, TypeError),
    ],
)
def test_dumps_refuses_what_json_dumps_refuses(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        json.dumps(value, sort_keys=True, allow_nan=False)
    with pytest.raises(error):
        journal_module.dumps(value)
    # The encoder it keeps is not left in a state that refuses the next value.
    assert journal_module.dumps({"ok": [1]}) == '{"ok":[1]}'


def test_dumps_refuses_a_circular_value_every_time() -> None:
    loop: list[Any] = []
    loop.append(loop)
    for _ in range(2):
        with pytest.raises(ValueError, match="Circular"):
            journal_module.dumps({"x": loop})
    shared = [1]
    assert journal_module.dumps({"a": shared, "b": shared}) == '{"a":[1],"b":[1]}'
