"""SIGINT and SIGTERM held off while an agent is started or ended, so that an interruption always
finds it under Holon's control.

Both signals unwind Holon by raising KeyboardInterrupt in the main thread (Ctrl-C, the CLI's
SIGTERM handler, `holon action`'s stopper). Raised between the agent's start and the moment Holon
holds its handle (inside `Popen` after the fork, or after a container's create call returned but
before the container was assigned), it would leave the agent running with nothing to end it;
raised while an ended agent's processes are being reaped, or its container removed, it would cut
that short. `HeldSignals` puts a handler that only records them in place over such a stretch, and
`release` hands each one that came meanwhile to the handler it replaced, at a point where the
caller's cleanup already covers the agent.

Python runs signal handlers in the main thread only, and only the main thread may set them: in
any other thread nothing is raised by a signal, and holding is a no-op.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType, TracebackType
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)


class HeldSignals:
    """`hold()` records SIGINT and SIGTERM instead of handling them; `release()` (idempotent)
    puts the handlers back and delivers what was recorded to them, in order, in this thread."""

    def __init__(self, signals: tuple[signal.Signals, ...] = HELD) -> None:
        self._signals = signals
        self._previous: dict[int, Any] = {}
        self._pending: list[int] = []

    def hold(self) -> HeldSignals:
        if threading.current_thread() is not threading.main_thread():
            return self
        try:
            for which in self._signals:
                if signal.getsignal(which) is None:
                    continue  # a handler not set from Python: it could not be put back
                # A signal already pending is handled before the swap (and may raise here).
                self._previous[which] = signal.signal(which, self._record)
        except BaseException:
            self.release()
            raise
        return self

    @property
    def holding(self) -> bool:
        return bool(self._previous)

    def _record(self, signum: int, frame: FrameType | None) -> None:
        self._pending.append(signum)

    def release(self) -> None:
        previous, self._previous = self._previous, {}
        raised: BaseException | None = None
        for which, handler in previous.items():
            while True:
                try:
                    signal.signal(which, handler)
                    break
                except BaseException as exc:
                    # A signal pending for a handler already put back was handled first (the
                    # swap did not happen): it unwinds the caller, once every handler is back.
                    raised = raised or exc
        pending, self._pending = self._pending, []
        if raised is not None:
            raise raised
        for signum in pending:
            # Delivered to this thread, so its handler runs here and now; the first that raises
            # unwinds the caller, and the rest would only have repeated it.
            signal.raise_signal(signum)

    def __enter__(self) -> HeldSignals:
        return self.hold()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def forget_handled_interrupt() -> None:
    """Tell the interpreter that the KeyboardInterrupt it saw was handled (call once it was).

    CPython 3.11 notes a KeyboardInterrupt that left code run by `exec` of a string as
    unhandled, even when a caller caught it, and at exit kills the process with SIGINT instead
    of exiting with its code. The dataclasses module builds every class's methods so; a signal
    landing while a module defining a dataclass is first imported (Holon imports lazily) would
    turn `holon action`'s 130, its state saved, into death by SIGINT (-2). Best effort: a no-op
    where the interpreter has no such flag to clear.
    """
    import ctypes

    with contextlib.suppress(ValueError, AttributeError, OSError):
        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0


__all__ = ["HELD", "HeldSignals", "forget_handled_interrupt"]
