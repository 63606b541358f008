"""bench.load in quick mode: a real `holon serve --listen` (its state warmed by a short replay)
under 300 signed deliveries from 20 concurrent senders, every criterion but memory flatness
judged (too few samples to judge)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from bench import load


def test_load_bench_quick_mode_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    began = time.monotonic()
    code = load.main(
        [
            "--deliveries",
            "300",
            "--concurrency",
            "20",
            "--deadline",
            "60",
            "--warm",
            "400",
            "--work-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert time.monotonic() - began < 20
    assert "FAIL" not in out
    for criterion in (
        "every delivery sent and answered 202 or 503 + Retry-After: 300/300 answered",
        "every accepted delivery journaled exactly once",
        "every accepted delivery decided exactly once",
        "inbox empty after stop: 0 deliveries",
        "serve stopped cleanly (SIGTERM, exit 0): exit 0",
    ):
        assert f"PASS  {criterion}" in out, out
    assert "accept latency (send to 202): p50" in out
    assert "serve peak RSS (VmHWM)" in out
    assert "warm-up: 400 events replayed" in out
    assert "serve's stderr: 0 lines" in out
    assert list(tmp_path.iterdir()) == []  # its state directory is gone


def test_memory_flatness_compares_the_first_and_last_thirds() -> None:
    samples = [(float(t), kib) for t, kib in enumerate([100, 120, 110, 130, 125, 128, 200, 90, 95])]
    assert load.flatness(samples) == (120, 200, 3)
    assert load.flatness(samples[:2]) == (0, 0, 0)


def test_deliveries_are_distinct_and_from_the_examples() -> None:
    items = load.make_deliveries(40)
    assert len({item.delivery for item in items}) == 40
    assert len({item.body for item in items}) == 40
    assert {item.event for item in items} == {
        "issue_comment",
        "issues",
        "pull_request",
        "check_suite",
    }


def test_resending_waits_while_the_serve_has_a_backlog(tmp_path: Path) -> None:
    decisions = tmp_path / "decisions.ndjson"
    decisions.write_text("")
    tail = load.DecisionTail(decisions)
    pacer = load.Pacer(tail, time.monotonic() + 5)
    for i in range(load.RESEND_BACKLOG):
        pacer.answered(load.Answer(f"d-{i}", 202, 0.01, event_id=f"evt_{i}"))
    pacer.answered(load.Answer("refused", 503, 0.01, retry_after="10"))  # not a backlog
    released = threading.Event()

    def resend() -> None:
        pacer.wait()
        released.set()

    waiter = threading.Thread(target=resend, daemon=True)
    waiter.start()
    try:
        assert not released.wait(0.3)  # RESEND_BACKLOG accepted, none decided: held
        with decisions.open("a") as journal:
            journal.write(json.dumps({"id": "dec:evt_0", "event_id": "evt_0"}) + "\n")
        assert released.wait(5)
    finally:
        waiter.join(5)
        tail.close()
