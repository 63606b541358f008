"""Benchmark: normalizing GitHub's webhook examples into validated envelopes vs json.loads.

Target (from the issue): normalizing every example in examples.json, repeated to at least 10,000
events, into validated EventEnvelope models costs at most 2x (issue 13; 5x before) `json.loads`
of the same payload bytes, side by side in one run; report envelopes per second and memory per
event. Also reported, not judged: the same with every repository, organization and user object
new to the content hash (its kept texts forgotten before each event), the cost when nothing
repeats. Run: `python -m bench.gateway`.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench._common import MIN_ROUNDS, Row, alternate, collect, judged, record, seconds_text
from holon.gateway.github import forget_kept_texts, normalize
from holon.gateway.payload import decode_payload

EXAMPLES = Path(__file__).resolve().parents[1] / "tests/fixtures/octokit-webhooks/examples.json"
# Issue 13 raised it from 5x.
TARGET = 2.0
NOW = datetime(2026, 11, 21, tzinfo=UTC)


def load_events(count: int) -> list[tuple[str, bytes]]:
    entries = json.loads(EXAMPLES.read_text())
    base = [
        (entry["name"], json.dumps(payload).encode())
        for entry in entries
        for payload in entry["examples"]
    ]
    return [base[i % len(base)] for i in range(max(count, len(base)))]


def normalize_all(events: list[tuple[str, bytes]]) -> list[object]:
    return [
        normalize(name, decode_payload(raw), via="webhook", received_at=NOW, delivery=str(i))
        for i, (name, raw) in enumerate(events)
    ]


def normalize_cold(events: list[tuple[str, bytes]]) -> list[object]:
    """normalize_all with nothing kept from earlier events (see content_hash)."""
    found: list[object] = []
    for i, (name, raw) in enumerate(events):
        forget_kept_texts()
        found.append(
            normalize(name, decode_payload(raw), via="webhook", received_at=NOW, delivery=str(i))
        )
    return found


def loads_all(events: list[tuple[str, bytes]]) -> list[object]:
    return [json.loads(raw) for _, raw in events]


Events = list[tuple[str, bytes]]


def _seconds(action: Callable[[Events], list[object]], events: Events) -> float:
    start = time.perf_counter()
    action(events)
    return time.perf_counter() - start


def _memory_per_event(action: Callable[[Events], list[object]], events: Events) -> float:
    gc.collect()
    tracemalloc.start()
    kept = action(events)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return current / len(events)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gateway", description=__doc__)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--smoke", action="store_true", help="one small round, do not judge")
    parser.add_argument("--work-dir", type=Path, default=None, help="unused (nothing is written)")
    args = parser.parse_args(argv)
    events = load_events(400 if args.smoke else max(args.events, 10_000))
    rounds = 1 if args.smoke else max(args.rounds, MIN_ROUNDS)
    base, meas = alternate(
        rounds, lambda _: _seconds(loads_all, events), lambda _: _seconds(normalize_all, events)
    )
    norm_s, loads_s = statistics.median(meas), statistics.median(base)
    ratio = norm_s / loads_s
    ratios = sorted(m / b for m, b in zip(meas, base, strict=True))
    cold_rounds = 1 if args.smoke else 3
    cold_base, cold_meas = alternate(
        cold_rounds,
        lambda _: _seconds(loads_all, events),
        lambda _: _seconds(normalize_cold, events),
    )
    cold_ratio = statistics.median(cold_meas) / statistics.median(cold_base)
    per_event = _memory_per_event(normalize_all, events)
    per_payload = _memory_per_event(loads_all, events)
    print()
    print(f"gateway: {len(events)} example events, {rounds} alternating rounds")
    n = len(events)
    print(f"  normalize (decode + envelope)  {norm_s * 1e3:9.1f} ms  {n / norm_s:8.0f} envelopes/s")
    print(
        f"  json.loads of the same bytes   {loads_s * 1e3:9.1f} ms  {n / loads_s:8.0f} payloads/s"
    )
    print(
        f"  ratio {ratio:.2f}x (target <= {TARGET:.1f}x); rounds {ratios[0]:.2f}x to "
        f"{ratios[-1]:.2f}x"
    )
    print(f"  nothing repeated (kept texts forgotten each event): {cold_ratio:.2f}x, reported")
    envelope_kib, payload_kib = per_event / 1024, per_payload / 1024
    print(
        f"  memory per event: envelope {envelope_kib:.1f} KiB, bare payload {payload_kib:.1f} KiB"
    )
    record(
        Row(
            f"normalize {n:,} webhook examples ({n / norm_s:,.0f} envelopes/s)",
            seconds_text(norm_s),
            seconds_text(loads_s),
            f"{ratio:.2f}x",
            f"<= {TARGET:g}x",
            judged(args.smoke, ratio <= TARGET),
        )
    )
    record(
        Row(
            "normalize, no repository/user object repeated",
            seconds_text(statistics.median(cold_meas)),
            seconds_text(statistics.median(cold_base)),
            f"{cold_ratio:.2f}x",
            "reported",
            None,
        )
    )
    record(
        Row(
            "gateway memory per event",
            f"{envelope_kib:.1f} KiB",
            f"{payload_kib:.1f} KiB",
            f"{envelope_kib / payload_kib:.2f}x",
            "reported",
            None,
        )
    )
    if args.smoke:
        print("  result: NOT JUDGED (smoke run)")
        return 0
    print(f"  result: {'PASS' if ratio <= TARGET else 'FAIL'}")
    return 0 if ratio <= TARGET else 1


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
