"""Serve's journals keep every rotated segment unless the operator bounds them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.serve import make_replay
from holon.controller.facts import StaticFacts
from holon.gateway.replay import parse_line
from holon.serve import serve as serve_module
from holon.serve.serve import Serve, ServeOptions
from holon.state.journal import Journal


@pytest.mark.parametrize("keep", [None, 3])
def test_journal_keep_reaches_every_journal(tmp_path: Path, keep: int | None) -> None:
    serve = Serve(
        ServeOptions(state_dir=tmp_path / "s", dry_run=True, once=True, journal_keep=keep)
    )
    controller = serve.open()
    try:
        journals = controller.journals
        assert [j.keep for j in (journals.events, journals.decisions, journals.actions)] == [
            keep
        ] * 3
    finally:
        serve.close()


@pytest.mark.parametrize("keep_reports", [False, True])
def test_a_replay_keeps_its_pass_reports_only_when_asked(
    tmp_path: Path, keep_reports: bool
) -> None:
    """A replay of a million events must not hold a million pass reports; `holon action`
    asks for its few (its step summary), and the closures answer either way."""
    example = Path(__file__).resolve().parents[2] / "examples" / "serve"
    options = ServeOptions(
        state_dir=tmp_path / "s",
        replay=[example / "replay.ndjson"],
        dry_run=True,
        once=True,
        keep_reports=keep_reports,
    )
    serve = Serve(options)
    serve.open()
    try:
        serve.run()
    finally:
        serve.close()
    assert serve.closures()
    assert bool(serve.reports) is keep_reports


def test_the_loop_defers_full_collections_and_restores_the_callers_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A serve's long-lived heap is walked by every full collection: while its loop runs they
    are rarer; the process's own setting is back once it ends (even when the loop raises)."""
    import gc

    from holon.serve import serve as module

    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    example = Path(__file__).resolve().parents[2] / "examples" / "serve"
    options = ServeOptions(
        state_dir=tmp_path / "s", replay=[example / "replay.ndjson"], dry_run=True, once=True
    )
    serve = Serve(options)
    serve.open()
    handle = serve.handle

    def watched(env: module.EventEnvelope) -> None:
        seen.append(gc.get_threshold())
        handle(env)

    monkeypatch.setattr(serve, "handle", watched)
    try:
        serve.run()
        assert seen
        assert all(t[2] >= module.FULL_COLLECTION_EVERY for t in seen)
        assert gc.get_threshold() == before

        def broken(env: module.EventEnvelope) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(serve, "handle", broken)
        serve.stopping.clear()
        with pytest.raises(RuntimeError):
            serve.run()
        assert gc.get_threshold() == before
    finally:
        serve.close()


def test_the_loop_freezes_the_heap_it_starts_with_and_thaws_it_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What exists as the loop starts is frozen out of the collector's walks while it runs (a
    full collection then walks only what the loop made), and thawed when it ends, even when it
    raises; a caller that froze objects of its own (a command's start-up) keeps them frozen."""
    import gc

    from holon.serve import serve as module

    seen: list[int] = []
    example = Path(__file__).resolve().parents[2] / "examples" / "serve"
    options = ServeOptions(
        state_dir=tmp_path / "s", replay=[example / "replay.ndjson"], dry_run=True, once=True
    )
    serve = Serve(options)
    serve.open()
    handle = serve.handle

    def watched(env: module.EventEnvelope) -> None:
        seen.append(gc.get_freeze_count())
        handle(env)

    monkeypatch.setattr(serve, "handle", watched)
    gc.unfreeze()  # whatever an earlier test left frozen
    try:
        serve.run()
        assert seen
        assert all(count > 1000 for count in seen)
        assert gc.get_freeze_count() == 0

        def broken(env: module.EventEnvelope) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(serve, "handle", broken)
        serve.stopping.clear()
        with pytest.raises(RuntimeError):
            serve.run()
        assert gc.get_freeze_count() == 0

        # The caller froze first: its choice stands after the loop.
        monkeypatch.setattr(serve, "handle", watched)
        serve.stopping.clear()
        gc.freeze()
        frozen = gc.get_freeze_count()
        serve.run()
        assert gc.get_freeze_count() > frozen // 2  # (refcounts still free frozen objects)
    finally:
        gc.unfreeze()
        serve.close()


def test_opening_loads_the_state_beside_a_frozen_heap_and_restores_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the state builds the long-lived heap: meanwhile what the caller had is frozen and
    full collections deferred (one due then is not paid walking it); both are back after."""
    import gc

    from holon.serve import serve as module

    gc.unfreeze()
    before = gc.get_threshold()
    serve = Serve(ServeOptions(state_dir=tmp_path / "s", dry_run=True, once=True))
    load = serve.store.load
    seen: list[tuple[int, int]] = []

    def watched() -> module.ServeState:
        seen.append((gc.get_freeze_count(), gc.get_threshold()[2]))
        return load()

    monkeypatch.setattr(serve.store, "load", watched)
    try:
        serve.open()
        assert len(seen) == 1
        assert seen[0][0] > 1000
        assert seen[0][1] >= module.FULL_COLLECTION_EVERY
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == before
    finally:
        serve.close()


def _replayed(tmp_path: Path, name: str, replay: Path) -> Path:
    at = datetime(2026, 3, 1, tzinfo=UTC)
    options = ServeOptions(state_dir=tmp_path / name, replay=[replay], dry_run=True, once=True)
    serve = Serve(options, clock=lambda: at, facts=StaticFacts())
    serve.writer = "serve-test"  # the same in both runs
    serve.open()
    serve.run()
    serve.close()
    return tmp_path / name


def test_a_replayed_payload_is_journaled_as_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The payload of a replayed delivery goes into the event's line as the text it was read
    from, not encoded again: the journals read back the same, the state is byte-identical."""
    replay = tmp_path / "replay.ndjson"
    make_replay(replay, 40)
    with replay.open("ab") as out:  # a broken line, an envelope line, a repeated member
        out.write(b'{"event": "star", "payload": [1]}\n')
        out.write(b'{"event": "star", "payload": {"x": 1}, "payload": {"action": "created", ')
        out.write(b'"starred_at": "t", "repository": {"full_name": "o/r"}, "n": 1.50}}\n')
    fast = _replayed(tmp_path, "fast", replay)
    monkeypatch.setattr(
        serve_module,
        "read_line",
        lambda raw, where, **kw: (parse_line(raw, where, **kw), None),
    )
    slow = _replayed(tmp_path, "slow", replay)
    for name in ("events", "decisions", "actions"):
        with Journal(fast / f"{name}.ndjson") as a, Journal(slow / f"{name}.ndjson") as b:
            assert list(a.read()) == list(b.read()), name
    assert (fast / "state.json").read_bytes() == (slow / "state.json").read_bytes()
    # Taken: the verbatim lines keep the replay's own spacing, the encoded ones are compact.
    verbatim = (fast / "events.ndjson").read_text().splitlines()
    assert sum('", "' in line for line in verbatim) == 41  # all but the broken line
    assert '"n": 1.50}' in verbatim[-1]
    assert '", "' not in (slow / "events.ndjson").read_text()
