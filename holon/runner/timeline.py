"""Where a run's time goes: with HOLON_TRACE_TIMELINE set, each `mark` prints one line to
stderr, `holon-timeline <ms> <thread> <event>`, the ms counted from HOLON_TRACE_T0 (a
`time.time_ns()` the caller took just before starting `holon`: `python -m bench.docker_run
--timeline`) or else from this module's import. Unset, a mark costs one comparison."""

from __future__ import annotations

import os
import sys
import threading
import time

_ON = bool(os.environ.get("HOLON_TRACE_TIMELINE"))


def _origin() -> int:
    given = os.environ.get("HOLON_TRACE_T0", "")
    return int(given) if given.isdigit() else time.time_ns()


_T0 = _origin() if _ON else 0


def on() -> bool:
    return _ON


def mark(event: str, at: int | None = None) -> None:
    """Print `event` with its time (`at`: a `time.time_ns()` taken earlier), when tracing."""
    if not _ON:
        return
    ms = ((time.time_ns() if at is None else at) - _T0) / 1e6
    name = threading.current_thread().name
    sys.stderr.write(f"holon-timeline {ms:8.1f} {name} {event}\n")
