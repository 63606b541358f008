"""The inbox: accepted deliveries on disk before 202, taken in order, dropped only after a save."""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.serve.inbox import INBOX_FILE, Inbox, pending_count
from tests.gateway.conftest import example

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def envelope(n: int) -> EventEnvelope:
    payload = example("issues", "opened")
    payload["issue"]["number"] = n
    return normalize("issues", payload, via="webhook", received_at=NOW, delivery=f"d-{n}")


def numbers(inbox: Inbox) -> list[int]:
    taken = []
    while (item := inbox.take()) is not None:
        assert item.envelope is not None
        taken.append(int(item.envelope.subject.id if item.envelope.subject else -1))
        inbox.done(item)
    return taken


def test_offer_take_in_order_and_bounded_by_count(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path, max_pending=2)
    assert inbox.offer(envelope(1))
    assert inbox.offer(envelope(2))
    assert not inbox.offer(envelope(3))  # full: the receiver answers 503
    assert len(inbox) == 2
    assert numbers(inbox) == [1, 2]
    assert inbox.take(timeout=0.05) is None
    assert inbox.offer(envelope(3))  # taking made room


def test_bounded_by_bytes(tmp_path: Path) -> None:
    line = len(envelope(1).model_dump_json()) + 1
    inbox = Inbox(tmp_path, max_bytes=line + line // 2)
    assert inbox.offer(envelope(1))
    assert not inbox.offer(envelope(2))


def test_an_accepted_envelope_is_on_disk_before_offer_returns(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    env = envelope(7)
    assert inbox.offer(env)
    # Read by another open file: what a crash right after the 202 would leave.
    (line,) = (tmp_path / INBOX_FILE).read_text().splitlines()
    assert EventEnvelope.model_validate_json(line) == env


def test_pending_deliveries_survive_a_restart(tmp_path: Path) -> None:
    first = Inbox(tmp_path)
    for n in (1, 2, 3):
        first.offer(envelope(n))
    taken = first.take()
    assert taken is not None
    first.done(taken)  # handled, but no checkpoint yet: taken again after the restart
    first.close()
    again = Inbox(tmp_path)
    assert numbers(again) == [1, 2, 3]
    assert pending_count(tmp_path) == 3


def test_compact_drops_only_what_was_handled(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    for n in (1, 2, 3, 4):
        inbox.offer(envelope(n))
    one, two = inbox.take(), inbox.take()
    assert one is not None
    assert two is not None
    inbox.done(one)  # two is taken but still being handled
    inbox.compact()
    assert pending_count(tmp_path) == 3
    inbox.offer(envelope(5))  # offsets stay right across the rewrite
    inbox.done(two)
    assert numbers(inbox) == [3, 4, 5]
    inbox.compact()
    assert (tmp_path / INBOX_FILE).stat().st_size == 0
    inbox.offer(envelope(6))
    assert numbers(inbox) == [6]
    inbox.close()
    assert numbers(Inbox(tmp_path)) == [6]  # 6 was handled but never compacted


def test_torn_tail_is_cut_and_the_rest_kept(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    inbox.offer(envelope(1))
    inbox.close()
    with (tmp_path / INBOX_FILE).open("ab") as handle:
        handle.write(b'{"id": "evt_torn", "sou')  # a crash mid-write: never answered 202
    again = Inbox(tmp_path)
    assert numbers(again) == [1]
    again.offer(envelope(2))
    assert numbers(again) == [2]
    assert pending_count(tmp_path) == 2


def test_an_unreadable_line_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / INBOX_FILE).write_bytes(
        b'{"id": 1}\n' + b"[" * 5000 + b"\n" + envelope(3).model_dump_json().encode() + b"\n"
    )
    inbox = Inbox(tmp_path)
    first, second, third = inbox.take(), inbox.take(), inbox.take()
    assert first is not None
    assert first.envelope is None
    assert "inbox line" in (first.error or "")
    assert second is not None
    assert second.envelope is None
    assert "nested" in (second.error or "")
    assert third is not None
    assert third.envelope is not None


def test_a_link_in_place_of_the_inbox_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("host file\n")
    (tmp_path / INBOX_FILE).symlink_to(target)
    with pytest.raises(InvalidInput, match="is a link"):
        Inbox(tmp_path)
    assert target.read_text() == "host file\n"


def test_a_fifo_in_place_of_the_inbox_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / INBOX_FILE)
    with pytest.raises(InvalidInput, match="not a regular file"):
        Inbox(tmp_path)


def test_a_failed_write_accepts_nothing(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    inbox.close()  # the descriptor is gone: every write fails as a full disk would
    from holon.serve.inbox import InboxUnavailable

    with pytest.raises(InboxUnavailable):
        inbox.offer(envelope(1))
    assert len(inbox) == 0


def test_concurrent_offers_each_land_once(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path, max_pending=1000)
    envs = [envelope(n) for n in range(1, 81)]

    def offer(chunk: list[EventEnvelope]) -> None:
        for env in chunk:
            assert inbox.offer(env)

    threads = [threading.Thread(target=offer, args=(envs[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    inbox.close()
    lines = (tmp_path / INBOX_FILE).read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == sorted(e.id for e in envs)
    assert os.stat(tmp_path / INBOX_FILE).st_mode & 0o077 == 0  # not readable by others


def test_a_failed_sync_is_no_acceptance_and_the_next_sync_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holon.serve import inbox as inbox_module
    from holon.serve.inbox import InboxUnavailable

    inbox = Inbox(tmp_path)
    real = os.fsync
    failures = [OSError(5, "Input/output error")]

    def flaky(fd: int) -> None:
        if failures:
            raise failures.pop()
        real(fd)

    monkeypatch.setattr(inbox_module.os, "fsync", flaky)
    with pytest.raises(InboxUnavailable, match="Input/output error"):
        inbox.offer(envelope(1))  # the receiver answers 503: GitHub's redelivery is deduped
    assert inbox.take() is None  # nothing unsynced is ever handed to the loop
    assert inbox.offer(envelope(2))
    assert numbers(inbox) == [1, 2]  # the next sync covered the earlier write too


def test_status_counts_accepted_deliveries_not_yet_checkpointed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from holon.cli.main import main

    inbox = Inbox(tmp_path)
    inbox.offer(envelope(1))
    inbox.offer(envelope(2))
    inbox.close()  # a serve killed after answering 202 twice
    assert main(["serve", "status", "--state-dir", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accepted_waiting"] == 2
    assert main(["serve", "status", "--state-dir", str(tmp_path)]) == 0
    assert "accepted deliveries not yet checkpointed: 2" in capsys.readouterr().out
