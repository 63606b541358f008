"""Refusals of the webhook receiver said once per window, not once per request.

Under a burst the receiver refuses thousands of deliveries with 503 within seconds (the inbox is
full: back-pressure doing its job). One line each would flood the operator's log and bury what
matters, so the first refusal of each reason in a window is said with its delivery, the rest are
counted and said as one line when the window has passed (at the next refusal or acceptance) or
when the receiver stops.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WINDOW_SECONDS = 10.0


class RefusalLog:
    """Thread-safe: the receiver's handler threads call `refused` and `accepted` concurrently."""

    def __init__(
        self,
        report: Callable[[str], None],
        *,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._report = report
        self._window = window
        self._clock = clock
        self._lock = threading.Lock()
        self._opened: dict[str, float] = {}  # reason -> when its window began
        self._counted: dict[str, int] = {}  # reason -> refusals in it not yet said

    def refused(self, reason: str, first_line: str) -> None:
        """One refusal for `reason`; `first_line` is said when it opens a window."""
        now = self._clock()
        with self._lock:
            began = self._opened.get(reason)
            if began is not None and now - began < self._window:
                self._counted[reason] = self._counted.get(reason, 0) + 1
                return
            lines = self._summaries(now, only=reason)
            self._opened[reason] = now
            lines.append(first_line)
        self._say(lines)

    def accepted(self) -> None:
        """A delivery was accepted: a closed window's count is said now, not at the next burst."""
        now = self._clock()
        with self._lock:
            if not self._counted:
                return
            lines = self._summaries(now, expired_only=True)
        self._say(lines)

    def flush(self) -> None:
        """Say every count not yet said (the receiver stops)."""
        with self._lock:
            lines = self._summaries(self._clock())
        self._say(lines)

    def _summaries(
        self, now: float, *, only: str | None = None, expired_only: bool = False
    ) -> list[str]:
        lines = []
        for reason in list(self._counted):
            if only is not None and reason != only:
                continue
            began = self._opened[reason]
            if expired_only and now - began < self._window:
                continue
            count = self._counted.pop(reason)
            lines.append(
                f"webhook listener: {count} more {'delivery' if count == 1 else 'deliveries'} "
                f"refused with 503 ({reason}) over {max(now - began, 0.0):.0f}s"
            )
        return lines

    def _say(self, lines: list[str]) -> None:
        for line in lines:
            self._report(line)
