"""The state directory: lock, load/save with .prev and atomicity, control inbox, journals."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from holon.errors import InvalidInput
from holon.state.journal import DEFAULT_MAX_BYTES
from holon.state.model import Record, ServeState
from holon.state.store import CorruptState, StateLocked, StateStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[StateStore]:
    held = StateStore(tmp_path / "state")
    yield held
    held.release()


def a_state(*keys: str) -> ServeState:
    state = ServeState()
    for key in keys:
        state.put(Record(kind="intent", key=key, status="inflight", updated_at=T0, writer="w"))
    return state


def test_constructor_creates_nothing(tmp_path: Path) -> None:
    StateStore(tmp_path / "state")
    assert not (tmp_path / "state").exists()


def test_second_acquire_is_refused_until_release(store: StateStore) -> None:
    store.acquire()
    store.acquire()  # idempotent for the holder
    assert store.lock_path.read_text().strip() == str(os.getpid())
    other = StateStore(store.directory)
    with pytest.raises(StateLocked, match=rf"locked by another holon serve \(pid {os.getpid()}\)"):
        other.acquire()
    assert isinstance(StateLocked("x"), InvalidInput)
    store.release()
    other.acquire()
    other.release()


def test_is_locked(store: StateStore) -> None:
    probe = StateStore(store.directory)
    assert not probe.is_locked()  # no lock file yet
    store.acquire()
    assert probe.is_locked()
    assert not store.is_locked()  # the holder itself is not "another"
    store.release()
    assert not probe.is_locked()


def test_context_manager_holds_the_lock(store: StateStore) -> None:
    with StateStore(store.directory):
        assert store.is_locked()
    assert not store.is_locked()


def test_unwritable_dir_is_invalid_input(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    bad = StateStore(blocker / "state")
    with pytest.raises(InvalidInput, match=r"state dir .*file/state is not writable: "):
        bad.acquire()
    with pytest.raises(InvalidInput, match="is not writable"):
        bad.save(ServeState())
    with pytest.raises(InvalidInput, match="is not writable"):
        bad.post_control({"command": "pause"})


def test_load_missing_is_empty(store: StateStore) -> None:
    assert store.load() == ServeState()
    assert not store.directory.exists()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "invalid JSON"),
        (b'{"version": 2, "records": {}}', "version"),
        (b'{"records": {"intent:a": {"kind": "intent"}}}', "records.intent:a"),
        (b"\xff\xfe", "not valid UTF-8"),
    ],
    ids=["json", "version", "schema", "binary"],
)
def test_corrupt_state_is_reported_and_left_untouched(
    store: StateStore, content: bytes, problem: str
) -> None:
    store.directory.mkdir()
    store.state_path.write_bytes(content)
    with pytest.raises(CorruptState) as caught:
        store.load()
    message = str(caught.value)
    assert str(store.state_path) in message
    assert problem in message
    assert "left untouched" in message
    assert "move it aside to start fresh, or copy state.json.prev over it" in message
    assert "\n" not in message
    assert isinstance(caught.value, InvalidInput)
    assert store.state_path.read_bytes() == content


def test_unreadable_state_is_corrupt(store: StateStore) -> None:
    store.state_path.mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(CorruptState, match="unreadable"):
        store.load()


def test_save_round_trip_and_prev(store: StateStore) -> None:
    store.save(a_state("one"))
    assert not store.prev_path.exists()
    assert store.load() == a_state("one")
    first = store.state_path.read_bytes()
    store.save(a_state("one", "two"))
    assert store.prev_path.read_bytes() == first
    assert store.load() == a_state("one", "two")
    store.save(a_state("three"))
    assert ServeState.model_validate_json(store.prev_path.read_bytes()) == a_state("one", "two")
    assert sorted(p.name for p in store.directory.iterdir()) == ["state.json", "state.json.prev"]


def test_save_falls_back_to_copy_without_hard_links(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(a_state("one"))
    first = store.state_path.read_bytes()

    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    store.save(a_state("two"))
    assert store.prev_path.read_bytes() == first
    assert store.load() == a_state("two")


def test_failed_save_leaves_the_old_file(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(a_state("old"))
    before = store.state_path.read_bytes()
    real_replace = os.replace

    def failing_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).name == "state.json":
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(InvalidInput, match="No space left on device"):
        store.save(a_state("new"))
    assert store.state_path.read_bytes() == before
    assert store.load() == a_state("old")
    # No temporary files are left behind.
    assert sorted(p.name for p in store.directory.iterdir()) == ["state.json", "state.json.prev"]


def test_control_inbox_order_and_removal(store: StateStore) -> None:
    assert store.take_controls() == []
    sent = [
        {"command": "pause", "reason": "deploy", "by": "ops", "at": "2026-01-01T00:00:00Z"},
        {"command": "resume", "by": "ops"},
        {"command": "pause", "reason": "ünïcode"},
    ]
    paths = [store.post_control(command) for command in sent]
    assert paths == sorted(paths)
    assert all(p.parent == store.control_dir and p.suffix == ".json" for p in paths)
    assert store.take_controls() == sent
    assert list(store.control_dir.iterdir()) == []
    assert store.take_controls() == []


def test_malformed_control_is_rejected_and_skipped(store: StateStore) -> None:
    first = store.post_control({"command": "pause"})
    bad = [first.with_name("0-a.json"), first.with_name("0-b.json"), first.with_name("0-c.json")]
    bad[0].write_text("{broken")
    bad[1].write_text(json.dumps({"no": "command"}))
    bad[2].write_bytes(b"\xff")
    (store.control_dir / ".in-progress.json.tmp").write_text("{}")  # an atomic write under way
    last = store.post_control({"command": "resume"})
    assert store.take_controls() == [{"command": "pause"}, {"command": "resume"}]
    rejected = store.control_dir / "rejected"
    assert sorted(p.name for p in rejected.iterdir()) == ["0-a.json", "0-b.json", "0-c.json"]
    assert not first.exists()
    assert not last.exists()
    assert (store.control_dir / ".in-progress.json.tmp").exists()


@pytest.mark.parametrize(
    "command", [{}, {"command": ""}, {"command": 1}, {"command": "x", "v": {1}}]
)
def test_post_control_refuses_bad_commands(store: StateStore, command: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        store.post_control(command)
    assert not store.control_dir.exists()


def test_journal_lives_in_the_state_dir(store: StateStore) -> None:
    with store.journal("events", fsync=False) as journal:
        journal.append({"id": "e1"})
    assert (store.directory / "events.ndjson").read_text() == '{"id":"e1"}\n'
    assert [e["id"] for e in store.journal("events").read()] == ["e1"]
    with pytest.raises(InvalidInput, match="journal name"):
        store.journal("../escape")


def test_journals_keep_every_segment_unless_bounded(store: StateStore) -> None:
    assert store.journal("events").keep is None
    assert store.journal("events").max_bytes == DEFAULT_MAX_BYTES
    assert store.journal("events", keep=3).keep == 3
    # One line a file: nine rotations, and every line still there.
    with store.journal("events", max_bytes=1, fsync=False) as journal:
        for i in range(10):
            journal.append({"id": f"e{i}"})
    names = sorted(p.name for p in store.directory.iterdir())
    assert names == ["events.ndjson", *(f"events.ndjson.{n}" for n in range(1, 10))]
    assert [e["id"] for e in store.journal("events").read()] == [f"e{i}" for i in range(10)]


def test_saves_reuse_each_record_json_and_match_the_model_dump(store: StateStore) -> None:
    """A save serializes only the records put since the last one, and writes exactly what the
    state's own model dump is, through puts, replacements, tombstones, prunes and odd keys."""
    state = ServeState()
    store.save(state)
    assert store.state_path.read_bytes() == state.model_dump_json(exclude_defaults=True).encode()
    odd = ['k"q', "k\\b", "ключ\u2028", "k\x01", "emoji \U0001f600"]
    for number, key in enumerate(["a", "b", *odd]):
        state.put(
            Record(
                kind="intent",
                key=key,
                status="inflight",
                updated_at=T0,
                writer="w",
                data={"n": number, "text": key, "nested": {"list": [1.5, None, True]}},
            )
        )
    for round_ in range(4):
        if round_ == 1:
            state.put(Record(kind="dedupe", key="a", status="seen", updated_at=T0, writer="w"))
        if round_ == 2:
            state.put(
                Record(
                    kind="intent",
                    key="a",
                    status="succeeded",
                    updated_at=T0,
                    writer="w2",
                    data={"result": {"ok": True}},
                )
            )
            state.delete("intent", "b", at=T0, writer="w")
        if round_ == 3:
            del state.records["intent:ключ\u2028"]
            state.records = dict(reversed(state.records.items()))
        store.save(state)
        expected = state.model_dump_json(exclude_defaults=True).encode()
        assert store.state_path.read_bytes() == expected
        assert store.load() == state
    # A record seen before is not serialized again; a new one is.
    kept = dict(store._json._pieces)
    state.put(Record(kind="meta", key="new", updated_at=T0, writer="w"))
    store.save(state)
    assert all(store._json._pieces[rid] is piece for rid, piece in kept.items())
    # A record dropped, saved without, and put back comes last, as in the state.
    first = next(iter(state.records))
    record = state.records.pop(first)
    store.save(state)
    state.records[first] = record
    store.save(state)
    assert store.state_path.read_bytes() == state.model_dump_json(exclude_defaults=True).encode()
    state.records.clear()
    store.save(state)
    assert store.state_path.read_bytes() == b"{}"


def test_new_controls_list_the_directory_only_when_it_may_have_changed(
    store: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[int] = []
    take = store.take_controls

    def counted() -> list[dict[str, object]]:
        listed.append(1)
        return take()

    monkeypatch.setattr(store, "take_controls", counted)
    assert store.take_new_controls() == []  # no directory yet: listed once
    assert store.take_new_controls() == []
    assert len(listed) == 1
    sent = store.post_control({"command": "pause"})
    assert store.take_new_controls() == [{"command": "pause"}]  # it appeared: listed
    # Changed within the last seconds: its timestamps may be too coarse to trust, so listed
    # every time until they are old enough.
    before = len(listed)
    assert store.take_new_controls() == []
    assert store.take_new_controls() == []
    assert len(listed) == before + 2
    old = time.time() - 60
    os.utime(store.control_dir, (old, old))
    assert store.take_new_controls() == []  # the ctime is still recent: listed
    monkeypatch.setattr("holon.state.store.CONTROL_RACY_SECONDS", -3600)  # now trusted
    assert store.take_new_controls() == []
    before = len(listed)
    assert store.take_new_controls() == []
    assert store.take_new_controls() == []
    assert len(listed) == before  # unchanged: not listed
    # A command posted since is taken at the next call.
    store.post_control({"command": "resume", "by": "ops"})
    assert store.take_new_controls() == [{"command": "resume", "by": "ops"}]
    assert not sent.exists()
