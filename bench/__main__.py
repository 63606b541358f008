"""`python -m bench`: every benchmark, one table (figure, measured, baseline, ratio, target, pass).

Each benchmark runs in its own process (`python -m bench --one NAME`), so one's imports, garbage
and page cache do not colour the next, and a crash or a missing Docker engine costs one row, not
the table. That process calls the module's `results(argv)`, which returns its rows (bench/_common.py
`Row`), and writes them as JSON; its own report goes to a log file beside them.

The default is the quick mode (about 10 minutes on a 2-core machine: the documented sizes where
they are cheap, fewer rounds or sizes where they are not); `--full` runs every benchmark at the
sizes bench/README.md documents. `--only NAME` (repeatable) picks benchmarks.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import Row, collect

# (module, quick arguments, full arguments). The order puts the filesystem-heavy snapshot first,
# before anything else has deleted a large tree (bench/README.md, "Reading the numbers").
SUITE: tuple[tuple[str, list[str], list[str]], ...] = (
    ("snapshot", [], []),
    ("closure", ["--quick"], []),
    ("gateway", [], []),
    ("serve", ["--skip-million"], []),
    ("storm", [], []),
    ("decider", [], []),
    ("agent", [], []),
    ("proxy", [], []),
    ("github", [], []),
    ("listener", ["--deliveries", "2000"], []),
    ("load", [], []),
    ("docker_run", [], []),
    ("action", ["--quick"], []),
)
# Per benchmark, at most this long (a hung benchmark costs its row, not the run).
TIMEOUT_S = 1800


def run_one(name: str, argv: list[str], out: Path) -> int:
    """In the child process: the module's rows as JSON to `out`; its exit code."""
    module = importlib.import_module(f"bench.{name}")
    if hasattr(module, "results"):
        rows: list[Row] = module.results(argv)
    else:
        # A benchmark without rows of its own (yet): one row, its verdict from its exit code.
        code, rows = collect(module.main, argv)
        if not rows:
            verdict = None if "--smoke" in argv else code == 0
            rows = [Row(f"bench.{name} (see its log)", "-", "-", "-", "exit 0", verdict)]
    out.write_text(json.dumps([dataclasses.asdict(r) for r in rows]))
    return 0


def run_suite(
    names: list[str], full: bool, work: Path, *, smoke: bool = False
) -> list[tuple[str, list[Row], str]]:
    done: list[tuple[str, list[Row], str]] = []
    for name, quick_args, full_args in SUITE:
        if names and name not in names:
            continue
        if not Path(__file__).with_name(f"{name}.py").exists():
            continue  # a benchmark another branch adds
        chosen = ["--smoke"] if smoke else full_args if full else quick_args
        argv = [*chosen, "--work-dir", str(work)]
        out, log = work / f"{name}.rows.json", work / f"{name}.log"
        print(f"== bench.{name} {' '.join(argv[:-2])}  (log: {log})", flush=True)
        started = time.perf_counter()
        command = [sys.executable, "-m", "bench", "--one", name, "--rows-out", str(out), "--"]
        with log.open("w") as handle:
            try:
                proc = subprocess.run(
                    [*command, *argv],
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    timeout=TIMEOUT_S,
                    check=False,
                )
                status = f"exit {proc.returncode}"
            except subprocess.TimeoutExpired:
                status = f"timed out after {TIMEOUT_S} s"
        rows = [Row(**r) for r in json.loads(out.read_text())] if out.exists() else []
        print(f"   {status}, {len(rows)} rows, {time.perf_counter() - started:.0f} s", flush=True)
        if not rows:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [status]
            rows = [Row(f"bench.{name}", "-", "-", "-", "-", False)]
            status = f"{status}: {tail[0][:120]}"
        done.append((name, rows, status))
    return done


def table(done: list[tuple[str, list[Row], str]]) -> str:
    header = ("figure", "measured", "baseline", "ratio", "target", "result")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, rows, _ in done:
        for row in rows:
            cells = (
                f"`{name}` {row.figure}",
                row.measured,
                row.baseline,
                row.ratio,
                row.target,
                row.result if row.passed is not False else f"**{row.result}**",
            )
            lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--full", action="store_true", help="the documented sizes (slow)")
    parser.add_argument(
        "--smoke", action="store_true", help="every benchmark's --smoke (checks, never judges)"
    )
    parser.add_argument("--only", action="append", default=[], help="run only this benchmark")
    parser.add_argument("--work-dir", type=Path, help="logs and temporary files (kept)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--rows-out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        return run_one(args.one, args.rest, args.rows_out)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="holon-bench-all-"))
    work.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    print(f"python -m bench{' --full' if args.full else ''}: logs in {work}")
    done = run_suite(args.only, args.full, work, smoke=args.smoke)
    print()
    print(table(done))
    after = os.getloadavg()
    print()
    print(
        f"load average at start {load[0]:.2f}, at the end {after[0]:.2f} (nproc {os.cpu_count()})"
    )
    for name, _, status in done:
        if status != "exit 0":
            print(f"  bench.{name}: {status}")
    failed = any(row.passed is False for _, rows, _ in done for row in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
