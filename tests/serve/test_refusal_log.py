"""A burst of 503s is said as one line and a count, not a line per refused delivery (found by
bench.load: 10,000 deliveries at concurrency 50 printed ~7,000 lines, torn into each other)."""

from __future__ import annotations

import io
import sys
import threading
from pathlib import Path

import pytest

from holon.cli import serve_cmd
from holon.serve.inbox import Inbox
from holon.serve.refusal_log import RefusalLog
from tests.serve.webhook_client import Start, delivery, send


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_first_refusal_said_then_counted_until_the_window_ends() -> None:
    said: list[str] = []
    clock = Clock()
    log = RefusalLog(said.append, window=10.0, clock=clock)
    log.refused("queue full", "first: d-1 refused")
    for _ in range(500):
        log.refused("queue full", "never said")
    assert said == ["first: d-1 refused"]
    clock.now += 11
    log.refused("queue full", "first again: d-502 refused")
    assert said[1:] == [
        "webhook listener: 500 more deliveries refused with 503 (queue full) over 11s",
        "first again: d-502 refused",
    ]


def test_count_said_on_acceptance_after_the_window_and_on_flush() -> None:
    said: list[str] = []
    clock = Clock()
    log = RefusalLog(said.append, window=10.0, clock=clock)
    log.refused("queue full", "first")
    log.refused("queue full", "counted")
    log.accepted()  # within the window: the burst may go on, nothing said yet
    assert said == ["first"]
    clock.now += 10
    log.accepted()
    assert said[1:] == ["webhook listener: 1 more delivery refused with 503 (queue full) over 10s"]
    log.refused("cannot store deliveries", "disk")
    log.refused("cannot store deliveries", "counted")
    log.refused("queue full", "queue again")
    log.flush()
    assert said[2:] == [
        "disk",
        "queue again",
        "webhook listener: 1 more delivery refused with 503 (cannot store deliveries) over 0s",
    ]
    log.flush()
    assert len(said) == 5  # nothing twice


def test_listener_reports_a_burst_of_refusals_in_one_line(start: Start, tmp_path: Path) -> None:
    queue = Inbox(tmp_path, max_pending=1)
    errors: list[str] = []
    address = start(queue.offer, on_error=errors.append)
    assert send(address, *delivery("issue_comment", "created", delivery_id="d-0")).status == 202
    statuses = [
        send(address, *delivery("issues", "opened", delivery_id=f"d-{i}")).status
        for i in range(1, 41)
    ]
    assert statuses == [503] * 40
    assert len(errors) == 1  # was 40: one line per refused delivery
    assert "queue full" in errors[0]
    assert "503" in errors[0]


def test_serve_error_lines_are_written_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each line in one write: print() wrote the text and the newline apart, so concurrent
    handler threads interleaved them ("...refused with 503webhook listener: ...")."""
    writes: list[str] = []

    class Recording(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

    monkeypatch.setattr(sys, "stderr", Recording())
    threads = [
        threading.Thread(target=serve_cmd._print_error, args=(f"line {i}\nwith a newline",))
        for i in range(20)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(writes) == sorted(f"line {i} with a newline\n" for i in range(20))
