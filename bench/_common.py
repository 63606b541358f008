"""Shared pieces of the benchmarks: alternating timing, the result table and the verdict."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# Full runs need at least this many alternating rounds (the rule).
MIN_ROUNDS = 10
# Upper/lower quartile of one side's runs above which the table warns that the median is shaky
# (quartiles, so a single outlier does not trigger it).
NOISY_SPREAD = 1.5

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


class BenchError(RuntimeError):
    """A benchmark step did not do what it should; the numbers would mean nothing."""


def git(cwd: Path, *args: str) -> bytes:
    """Run git for setting up fixtures, with a fixed identity and no user hooks."""
    env = {**os.environ, **GIT_IDENTITY}
    proc = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip()
        raise BenchError(f"git {' '.join(args)} failed: {detail}")
    return proc.stdout


@contextmanager
def scratch(prefix: str, work_dir: Path | None) -> Iterator[str]:
    """A temporary directory for one benchmark, inside `work_dir` (made first, as
    `python -m bench` does: `--work-dir` may name a directory that does not exist yet)."""
    if work_dir is not None:
        work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=work_dir) as tmp:
        yield tmp


def remove_tree(path: Path) -> None:
    """Delete a directory tree; `rm -rf` is much faster than shutil.rmtree on many files."""
    subprocess.run(["rm", "-rf", "--", str(path)], check=True)


@dataclass
class Samples:
    label: str
    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def alternate(
    rounds: int,
    baseline: Callable[[int], float],
    measured: Callable[[int], float],
) -> tuple[list[float], list[float]]:
    """Run baseline, measured, baseline, measured, ... and return both lists of seconds.

    Each callable gets the round number and returns the seconds it timed itself, so set-up and
    checks around the timed part stay out of the numbers. Alternating spreads any drift of the
    machine (page cache, other load) evenly over both sides. Callers do an untimed warm-up of
    each side first (their correctness check), so neither pays for cold caches alone.
    """
    base: list[float] = []
    meas: list[float] = []
    for i in range(rounds):
        base.append(baseline(i))
        meas.append(measured(i))
        print(f"  round {i + 1}/{rounds}: baseline {base[-1]:.3f} s, holon {meas[-1]:.3f} s")
    return base, meas


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def report(
    title: str,
    measured: Samples,
    baseline: Samples,
    target: float,
    *,
    smoke: bool,
    figure: str | None = None,
) -> int:
    """Print the result table; return the exit code (1 when the target is missed, 0 otherwise).

    `figure` names the row this comparison gives the single table of `python -m bench`."""
    ratio = measured.median / baseline.median if baseline.median > 0 else float("inf")
    passed = ratio <= target
    record(
        Row(
            figure or title,
            seconds_text(measured.median),
            seconds_text(baseline.median),
            f"{ratio:.2f}x",
            f"<= {target:g}x",
            judged(smoke, passed),
        )
    )
    verdict = "NOT JUDGED (smoke run)" if smoke else "PASS" if passed else "FAIL"
    width = max(len(measured.label), len(baseline.label), len("ratio (measured/baseline)"))
    rows = [
        (measured.label, measured.seconds),
        (baseline.label, baseline.seconds),
    ]
    print()
    print(title)
    print(f"  {'':<{width}}  {'median':>9}  {'min':>9}  {'max':>9}  runs")
    for label, seconds in rows:
        print(
            f"  {label:<{width}}  {statistics.median(seconds):>8.3f}s  {min(seconds):>8.3f}s"
            f"  {max(seconds):>8.3f}s  {len(seconds):>4}"
        )
    print(f"  {'ratio (measured/baseline)':<{width}}  {ratio:>8.2f}x")
    print(f"  {'target':<{width}}  {'<=' + format(target, '.2f'):>8}x")
    print(f"  {'result':<{width}}  {verdict}")
    for label, seconds in rows:
        if len(seconds) < 4:
            continue
        # A wide spread means the machine, not the code, decided the numbers: say so.
        low, _, high = statistics.quantiles(seconds, n=4)
        if low > 0 and high / low > NOISY_SPREAD:
            print(f"  warning: {label} runs spread {high / low:.1f}x between quartiles;")
            print("           the machine was busy or its filesystem was still settling")
    if smoke or passed:
        return 0
    return 1


# ---------------------------------------------------------------- one table for every benchmark


@dataclass
class Row:
    """One judged (or reported) figure of a benchmark, for the single table of `python -m bench`.

    `passed` is None for a figure reported but not judged (a smoke run, or no target)."""

    figure: str
    measured: str
    baseline: str
    ratio: str
    target: str
    passed: bool | None

    @property
    def result(self) -> str:
        return "-" if self.passed is None else "PASS" if self.passed else "FAIL"


# The rows of the benchmark running in this process, or None when nobody collects them.
_collected: list[Row] | None = None


def record(row: Row) -> None:
    """Keep `row` for `collect` (a no-op when the benchmark runs on its own)."""
    if _collected is not None:
        _collected.append(row)


def collect(main: Callable[[list[str] | None], int], argv: list[str]) -> tuple[int, list[Row]]:
    """Run a benchmark's `main(argv)` and return its exit code with the rows it recorded."""
    global _collected
    _collected = []
    try:
        code = main(argv)
        return code, _collected
    finally:
        _collected = None


def judged(smoke: bool, passed: bool) -> bool | None:
    return None if smoke else passed


def seconds_text(value: float) -> str:
    if value < 0.01:
        return f"{value * 1000:.2f} ms"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
