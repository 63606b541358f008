"""`holon serve`'s signal handler asks the serve to stop once: a second signal landing while
the first handler is inside `Event.set` (holding its lock, which is not reentrant) must not set
it again there, or the handler would wait on itself for ever."""

from __future__ import annotations

import signal
import threading
from typing import Any

from holon.serve.serve import install_signal_handlers


def test_a_signal_inside_the_stop_request_does_not_re_enter_it() -> None:
    handlers: dict[int, Any] = {}

    class Stopping(threading.Event):
        inside = False

        def set(self) -> None:
            assert not self.inside, "stopping.set() re-entered: a deadlock on its lock"
            self.inside = True
            try:
                handlers[signal.SIGTERM](signal.SIGTERM, None)  # the next signal, right here
                super().set()
            finally:
                self.inside = False

    serve: Any = type("Serve", (), {"stopping": Stopping()})()
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        install_signal_handlers(serve)
        handlers.update({s: signal.getsignal(s) for s in before})
        handlers[signal.SIGINT](signal.SIGINT, None)
        assert serve.stopping.is_set()
        handlers[signal.SIGTERM](signal.SIGTERM, None)  # later ones: nothing more to do
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
