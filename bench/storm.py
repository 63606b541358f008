"""Benchmark: a comment storm on one issue, `holon serve` replay time per event at two sizes.

Every delivery is a `/holon solve` comment on the SAME issue, so every decision is about one
subject whose history keeps growing. The work per event must not grow with that history (each
decision reads only what the subject's bounded indexes and memory hold): the CPU time per event
(`time.process_time`, other jobs share the machine) at the large size is within 1.25x of the
small size's, each the median of alternating rounds. Policy decider, dry-run executor, journals
and checkpoints as `bench.serve` runs them.
Run: `python -m bench.storm` (`--smoke`: tiny sizes, not judged).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import Row, collect, judged, record, remove_tree, scratch
from bench.serve import EXAMPLES, run_serve

SLACK = 1.25
ISSUE = 4242


def make_storm(path: Path, count: int) -> None:
    """`count` distinct `/holon solve` comments by the owner on issue #ISSUE."""
    examples = {e["name"]: e["examples"] for e in json.loads(EXAMPLES.read_text())}
    comment: dict[str, Any] = next(
        p for p in examples["issue_comment"] if p.get("action") == "created"
    )
    with path.open("w") as out:
        for i in range(count):
            payload = json.loads(json.dumps(comment))
            payload["issue"]["number"] = ISSUE
            comment_fields = {"id": 10_000_000 + i, "body": "/holon solve"}
            payload["comment"].update(comment_fields, author_association="OWNER")
            line = {"event": "issue_comment", "delivery": f"storm{i}", "payload": payload}
            out.write(json.dumps(line) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.storm", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, do not judge")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    small, large = (200, 2000) if args.smoke else (2_000, 20_000)
    rounds = 1 if args.smoke else max(args.rounds, 3)
    per_event: dict[int, list[float]] = {small: [], large: []}
    with scratch("holon-bench-storm-", args.work_dir) as tmp:
        work = Path(tmp)
        for n in (small, large):
            make_storm(work / f"storm-{n}.ndjson", n)
        for r in range(rounds):
            for n in (small, large):  # alternating: both sizes see the same load
                state_dir = work / f"serve-{n}-{r}"
                seconds = run_serve(work / f"storm-{n}.ndjson", state_dir, time.process_time)
                per_event[n].append(seconds / n)
                print(f"  {n} comments on one issue, round {r + 1}/{rounds}: {seconds:.2f} s CPU")
                remove_tree(state_dir)
    at_small = statistics.median(per_event[small])
    at_large = statistics.median(per_event[large])
    growth = at_large / at_small
    ok = growth <= SLACK
    print()
    print(f"comment storm on one issue, CPU per event ({rounds} rounds, median)")
    print(
        f"  {small} comments: {at_small * 1e3:.3f} ms/event; {large} comments: "
        f"{at_large * 1e3:.3f} ms/event; {growth:.2f}x (target <= {SLACK})"
    )
    record(
        Row(
            f"serve comment storm, {large:,} vs {small:,} on one issue (CPU per event)",
            f"{at_large * 1e3:.3f} ms",
            f"{at_small * 1e3:.3f} ms",
            f"{growth:.2f}x",
            f"<= {SLACK:g}x",
            judged(args.smoke, ok),
        )
    )
    if args.smoke:
        print("  result: NOT JUDGED (smoke run)")
        return 0
    print(f"  result: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
