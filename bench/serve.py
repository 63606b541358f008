"""Benchmark: `holon serve` replay throughput against an I/O floor, side by side.

Target (from the issue): replay throughput with the policy decider and the dry-run executor,
journals and state checkpoints included, is at least 75% of an I/O floor (issue 13; 25% before)
at 10k and 100k events, 3 alternating rounds each: a bare loop that reads the same replay file,
parses each line, appends it to three journal files and follows the same fsync and checkpoint
policy. Linear: the share of the floor at 100k is within 1.25x of the share at 10k (each measured
beside its floor); the state file stays under 5 MB after 1,000,000 events (bounded dedupe).
Run: `python -m bench.serve`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench._common import Row, collect, judged, record, remove_tree, scratch
from holon.controller.facts import StaticFacts
from holon.fsutil import atomic_write_text
from holon.serve.serve import Serve, ServeOptions
from holon.state.journal import Journal

EXAMPLES = Path(__file__).resolve().parents[1] / "tests/fixtures/octokit-webhooks/examples.json"
# Issue 13 raised it from 0.25 (judged at every size).
TARGET = 0.75
# Linear: serve's share of the floor at the largest size against the smallest, each measured
# beside its own floor (absolute times taken minutes apart carry the machine's changing load).
LINEAR_SLACK = 1.25
CHECKPOINT_EVERY = 1000
MAX_STATE_BYTES = 5 * 1024 * 1024
LABELED_FROM = datetime(2026, 1, 1, tzinfo=UTC)


def _example(examples: dict[str, list[dict[str, Any]]], event: str, action: str | None) -> Any:
    return next(p for p in examples[event] if action is None or p.get("action") == action)


def make_replay(path: Path, count: int, *, light: bool = False) -> None:
    """`count` distinct deliveries: commands, labels, check suites, pushes and stars.

    `light` uses only small generic events (for the million-event state-size run)."""
    examples = {e["name"]: e["examples"] for e in json.loads(EXAMPLES.read_text())}
    comment = _example(examples, "issue_comment", "created")
    label = _example(examples, "issues", "labeled")
    suite = _example(examples, "check_suite", "completed")
    push = _example(examples, "push", None)
    with path.open("w") as out:
        for i in range(count):
            kind = "star" if light else ("comment", "label", "suite", "push", "star")[i % 5]
            if kind == "comment":
                payload = json.loads(json.dumps(comment))
                payload["issue"]["number"] = 1000 + i
                payload["comment"].update(id=i, body="/holon solve", author_association="OWNER")
                event = "issue_comment"
            elif kind == "label":
                payload = json.loads(json.dumps(label))
                # A distinct, valid time each (the gateway refuses a malformed one: an earlier
                # `...Z#{i}` made every label a broken line that never reached the controller).
                at = LABELED_FROM + timedelta(seconds=i)
                payload["issue"]["updated_at"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
                event = "issues"
            elif kind == "suite":
                payload = json.loads(json.dumps(suite))
                payload["check_suite"]["id"] = i
                event = "check_suite"
            elif kind == "push":
                payload = json.loads(json.dumps(push))
                payload["after"] = f"{i:040x}"
                event = "push"
            else:
                payload = {
                    "action": "created",
                    "starred_at": f"s{i}",
                    "repository": {"full_name": "octo/bench"},
                    "sender": {"login": f"u{i}"},
                }
                event = "star"
            out.write(json.dumps({"event": event, "delivery": f"d{i}", "payload": payload}) + "\n")


def run_serve(
    replay: Path, state_dir: Path, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds of one replay through `holon serve` by `clock` (bench.storm: CPU time)."""
    options = ServeOptions(
        state_dir=state_dir,
        replay=[replay],
        dry_run=True,
        once=True,
        checkpoint_every=CHECKPOINT_EVERY,
        checkpoint_seconds=3600,
    )
    start = clock()
    serve = Serve(options, facts=StaticFacts())
    serve.open()
    serve.run()
    serve.close()
    return clock() - start


def run_floor(replay: Path, state_dir: Path) -> float:
    """Read, parse, append to three journals, checkpoint a bounded key set: the I/O floor."""
    state_dir.mkdir()
    start = time.perf_counter()
    journals = [Journal(state_dir / f"{n}.ndjson", fsync=False) for n in ("e", "d", "a")]
    keys: dict[str, int] = {}
    with replay.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            entry = json.loads(raw)
            line = {"id": entry["delivery"], "entry": entry}
            for journal in journals:
                journal.append(line)
            keys[entry["delivery"]] = number
            if len(keys) > 20_000:
                keys.pop(next(iter(keys)))
            if number % CHECKPOINT_EVERY == 0:
                atomic_write_text(state_dir / "state.json", json.dumps(keys))
    atomic_write_text(state_dir / "state.json", json.dumps(keys))
    for journal in journals:
        journal.close()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serve", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, do not judge")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-million", action="store_true", help="skip the state-size run")
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = (200, 1000) if args.smoke else (10_000, 100_000)
    rounds = 1 if args.smoke else max(args.rounds, 3)
    rows: list[tuple[int, float, float]] = []
    with scratch("holon-bench-serve-", args.work_dir) as tmp:
        work = Path(tmp)
        for n in sizes:
            replay = work / f"replay-{n}.ndjson"
            make_replay(replay, n)
            serve_s: list[float] = []
            floor_s: list[float] = []
            # Every size gets the same alternating rounds (the 100k size was one round).
            for r in range(rounds):
                floor_s.append(run_floor(replay, work / f"floor-{n}-{r}"))
                serve_s.append(run_serve(replay, work / f"serve-{n}-{r}"))
                print(
                    f"  {n} events, round {r + 1}/{rounds}: floor {floor_s[-1]:.2f} s, "
                    f"serve {serve_s[-1]:.2f} s"
                )
                remove_tree(work / f"floor-{n}-{r}")
                remove_tree(work / f"serve-{n}-{r}")
            rows.append((n, statistics.median(serve_s), statistics.median(floor_s)))
        state_bytes = None
        if not args.skip_million:
            million = 2_000 if args.smoke else 1_000_000
            replay = work / "replay-million.ndjson"
            make_replay(replay, million, light=True)
            state_dir = work / "serve-million"
            seconds = run_serve(replay, state_dir)
            state_bytes = (state_dir / "state.json").stat().st_size
            print(f"  {million} light events in {seconds:.1f}s, state.json {state_bytes} bytes")
    print()
    print(
        f"holon serve replay (policy decider, dry-run executor) vs the I/O floor ({rounds} rounds)"
    )
    ok = True
    for n, serve_t, floor_t in rows:
        ratio = floor_t / serve_t  # serve's throughput as a share of the floor's
        ok &= ratio >= TARGET
        print(
            f"  {n:>7} events: serve {n / serve_t:9.0f} events/s, floor {n / floor_t:9.0f} "
            f"events/s, ratio {ratio:.2f} (target >= {TARGET})"
        )
        record(
            Row(
                f"serve replay, {n:,} events (share of the I/O floor's throughput)",
                f"{n / serve_t:,.0f} ev/s",
                f"{n / floor_t:,.0f} ev/s",
                f"{ratio:.2f}",
                f">= {TARGET:g}",
                judged(args.smoke, ratio >= TARGET),
            )
        )
    share = [floor_t / serve_t for _, serve_t, floor_t in rows]
    growth = share[0] / share[-1]
    linear = growth <= LINEAR_SLACK
    largest, smallest = rows[-1][0], rows[0][0]
    print(
        f"  share of the floor, {smallest} vs {largest}: {share[0]:.2f} vs {share[-1]:.2f}, "
        f"{growth:.2f}x (linear if <= {LINEAR_SLACK})"
    )
    record(
        Row(
            f"serve replay linear ({smallest:,} to {largest:,}, share of the floor)",
            f"{share[-1]:.2f}",
            f"{share[0]:.2f}",
            f"{growth:.2f}x",
            f"<= {LINEAR_SLACK:g}x",
            judged(args.smoke, linear),
        )
    )
    small = state_bytes is None or state_bytes < MAX_STATE_BYTES
    if state_bytes is not None:
        print(
            f"  state.json after the million-event run: {state_bytes / 1e6:.2f} MB (target < 5 MB)"
        )
        record(
            Row(
                "serve state.json after 1,000,000 events",
                f"{state_bytes / 1e6:.2f} MB",
                "-",
                "-",
                "< 5 MB",
                judged(args.smoke, small),
            )
        )
    if args.smoke:
        print("  result: NOT JUDGED (smoke run)")
        return 0
    passed = ok and linear and small
    print(f"  result: {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
