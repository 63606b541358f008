"""The run's timeline (`holon/runner/timeline.py`): printed only when asked for."""

from __future__ import annotations

import os
import subprocess
import sys
import time

CODE = "from holon.runner.timeline import mark; mark('something happened')"


def _run(env: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HOLON_TRACE_")}
    proc = subprocess.run(
        [sys.executable, "-c", CODE], env={**clean, **env}, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def test_silent_unless_asked() -> None:
    assert _run({}) == ""


def test_marks_count_from_the_given_origin() -> None:
    start = time.time_ns()
    lines = _run({"HOLON_TRACE_TIMELINE": "1", "HOLON_TRACE_T0": str(start)}).splitlines()
    assert len(lines) == 1
    tag, ms, thread, event = lines[0].split(None, 3)
    assert (tag, thread, event) == ("holon-timeline", "MainThread", "something happened")
    assert 0 < float(ms) < (time.time_ns() - start) / 1e6 + 1


def test_a_bad_origin_counts_from_the_import() -> None:
    lines = _run({"HOLON_TRACE_TIMELINE": "1", "HOLON_TRACE_T0": "not a number"}).splitlines()
    assert 0 <= float(lines[0].split()[1]) < 1000
