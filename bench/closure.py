"""Benchmark: closure derivation over many evidence items, against json.loads of the same items.

Target (from the issue): deriving closure over N already-validated evidence items, with the
deciding item placed last, costs no more than `json.loads` of the same items, side by side, for
N = 1,000, 10,000 and 100,000, and grows linearly in N. Run: `python -m bench.closure`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from bench._common import MIN_ROUNDS, alternate
from holon.closure.derive import derive_closure
from holon.closure.evidence import Evidence

SIZES = (1_000, 10_000, 100_000)
SMOKE_SIZES = (10, 100)
TARGET = 1.0
# Per-item cost at the largest size may exceed the smallest size's by this factor and still
# count as linear (caches and allocator effects, not an N log N term).
LINEAR_SLACK = 2.0
T = "2026-11-21T10:00:00Z"


def make_items(n: int) -> list[dict[str, Any]]:
    """n - 1 items that decide nothing on their own, then the deciding item (a failed run)."""
    filler = [
        {"kind": "text", "text": "I think the tests pass now."},
        {"kind": "claim", "text": "Done."},
        {"kind": "work_item", "state": "done", "summary": "step finished"},
        {"kind": "wait", "on": "timer", "until": T, "resolved": True},
        {"kind": "wait", "on": "external", "condition": "ci", "resolved": True},
        {"kind": "posture", "posture": "idle"},
    ]
    items = [
        {"id": f"i{i}", "source": "bench", "at": T, **filler[i % len(filler)]} for i in range(n - 1)
    ]
    items.append({"id": "decider", "source": "runner", "at": T, "kind": "run", "state": "failed"})
    return items


def measure(n: int, rounds: int) -> tuple[float, float]:
    items = make_items(n)
    text = json.dumps({"items": items})
    evidence = Evidence.model_validate_json(text)  # validated once, not timed
    closure = derive_closure(evidence)
    if closure.rule != "terminal_failure" or closure.deciding_items != ["decider"]:
        raise SystemExit(f"benchmark broken: the last item did not decide ({closure.rule})")

    def timed(action: Any) -> float:
        start = time.perf_counter()
        action()
        return time.perf_counter() - start

    base, meas = alternate(
        rounds,
        lambda _: timed(lambda: json.loads(text)),
        lambda _: timed(lambda: derive_closure(evidence)),
    )
    return statistics.median(meas), statistics.median(base)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.closure", description=__doc__)
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, do not judge")
    args = parser.parse_args(argv)
    sizes = SMOKE_SIZES if args.smoke else SIZES
    rounds = 1 if args.smoke else max(args.rounds, MIN_ROUNDS)
    rows = [(n, *measure(n, rounds)) for n in sizes]
    print()
    print(f"closure derivation vs json.loads of the same items ({rounds} alternating rounds)")
    print(f"  {'N':>8}  {'derive':>10}  {'json.loads':>10}  {'ratio':>6}  {'per item':>9}  target")
    ok = True
    for n, derive_s, loads_s in rows:
        ratio = derive_s / loads_s
        ok &= ratio <= TARGET
        print(
            f"  {n:>8}  {derive_s * 1e3:>8.2f}ms  {loads_s * 1e3:>8.2f}ms  {ratio:>5.2f}x"
            f"  {derive_s / n * 1e6:>7.3f}us  <={TARGET:.2f}x"
        )
    growth = (rows[-1][1] / rows[-1][0]) / (rows[0][1] / rows[0][0])
    linear = growth <= LINEAR_SLACK
    print(f"  per-item cost, largest N vs smallest: {growth:.2f}x (linear if <= {LINEAR_SLACK}x)")
    if args.smoke:
        print("  result: NOT JUDGED (smoke run)")
        return 0
    passed = ok and linear
    print(f"  result: {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
