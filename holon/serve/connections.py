"""Connections of the webhook receiver: load bounded and refused out loud, never by a reset.

At most `max_handlers` requests are served at once, each within `REQUEST_DEADLINE_SECONDS` from
its first byte to its answer (a slow-drip sender is cut off: reading ends, and the handler answers
408 if it still can). When every handler is busy, a few spare threads answer 503 with Retry-After
at once, before reading anything, so stalled senders cannot hold them either; beyond those,
connections wait in a large listen backlog. What the requests mean is the handler's business
(`listener.py`).
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RETRY_AFTER_SECONDS = 10
# A whole request, first byte to answer: a sender dripping a byte at a time is cut off here.
REQUEST_DEADLINE_SECONDS = 30.0
DEFAULT_MAX_HANDLERS = 32
# Threads that only answer 503 while every handler is busy.
SPARE_REFUSERS = 4
# How long the accepting thread waits for a free handler before answering 503 instead.
BUSY_WAIT_SECONDS = 0.2
# Pending connections the kernel keeps while every thread is busy (capped by net.core.somaxconn).
LISTEN_BACKLOG = 1024
# After answering without reading the request: half-close, then discard at most this much for
# at most this long, so the client reads our answer instead of a connection reset.
LINGER_BYTES = 64 * 1024
LINGER_SECONDS = 0.5


class BoundedServer(ThreadingHTTPServer):
    """A threading HTTP server with a bound on handler threads, spare threads that answer 503
    when all are busy, a deadline per request and a count of requests in flight."""

    # Daemon handler threads never keep the interpreter alive; stop() waits for them itself.
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self,
        address: tuple[str, int],
        family: socket.AddressFamily,
        handler: type[BaseHTTPRequestHandler],
        *,
        max_handlers: int,
        report: Callable[[str], None],
    ) -> None:
        self.address_family = family
        self.report = report
        self._active = 0
        self._idle = threading.Condition()
        self._handlers = threading.BoundedSemaphore(max_handlers)
        self._refusers = threading.BoundedSemaphore(SPARE_REFUSERS)
        self.closing = threading.Event()
        self._deadlines: dict[socket.socket, float] = {}
        self._deadlines_lock = threading.Lock()
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind also does a reverse DNS lookup for server_name; not needed here.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        """In the accepting thread: a free handler, else a spare thread that answers 503, else
        wait (the connection stays in the backlog; nothing is reset)."""
        busy = False
        while not self._handlers.acquire(timeout=BUSY_WAIT_SECONDS):
            if self._refusers.acquire(blocking=False):
                busy = True
                break
            if self.closing.is_set():
                self.shutdown_request(request)
                return
        # Counted here, so stop() cannot miss a request it already accepted.
        with self._idle:
            self._active += 1
        try:
            threading.Thread(
                target=self._serve_one, args=(request, client_address, busy), daemon=True
            ).start()
        except BaseException:
            (self._refusers if busy else self._handlers).release()
            self._finished()
            self.shutdown_request(request)
            raise

    def _serve_one(self, request: socket.socket, client_address: Any, busy: bool) -> None:
        with self._deadlines_lock:
            self._deadlines[request] = time.monotonic() + REQUEST_DEADLINE_SECONDS
        try:
            if busy:
                answer_busy(request)  # bounded by its own short timeouts
            else:
                self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            with self._deadlines_lock:
                self._deadlines.pop(request, None)
            self.shutdown_request(request)
            (self._refusers if busy else self._handlers).release()
            self._finished()

    def expired(self, request: socket.socket) -> bool:
        with self._deadlines_lock:
            return request not in self._deadlines

    def watch_deadlines(self) -> None:
        """Cut off requests past their deadline: reading ends (the handler then answers 408 if
        it still can), so no sender holds a handler longer than the deadline."""
        while not self.closing.wait(0.2):
            now = time.monotonic()
            with self._deadlines_lock:
                late = [r for r, at in self._deadlines.items() if at <= now]
                for request in late:
                    del self._deadlines[request]
            for request in late:
                with contextlib.suppress(OSError):
                    request.shutdown(socket.SHUT_RD)

    def _finished(self) -> None:
        with self._idle:
            self._active -= 1
            self._idle.notify_all()

    def wait_idle(self, timeout: float) -> int:
        """Wait for in-flight requests; the number still running when the time is up."""
        with self._idle:
            self._idle.wait_for(lambda: self._active == 0, timeout)
            return self._active

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver would print a traceback to stderr. A client that hangs up or stalls is
        # not our failure; anything else is reported by type only (its text may quote input).
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        name = type(exc).__name__ if exc is not None else "error"
        self.report(f"webhook listener: unexpected {name} on a connection")


def linger(conn: socket.socket) -> None:
    """Close after answering without reading the request, without resetting the connection.

    Closing a socket with unread bytes sends a reset, which can destroy the answer before the
    client reads it. So: half-close, then drop what is already in flight (bounded) until the
    client hangs up. What is dropped is never buffered or looked at.
    """
    try:
        conn.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + LINGER_SECONDS
        budget = LINGER_BYTES
        while budget > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            conn.settimeout(left)
            chunk = conn.recv(min(budget, 16 * 1024))
            if not chunk:
                break
            budget -= len(chunk)
    except OSError:
        pass  # timed out or reset: either way the connection is done


_BUSY_BODY = json.dumps({"error": "busy: retry later"}).encode()
# Sent before the request is read: a sender stalling its head cannot hold a spare thread.
_BUSY_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    + f"Content-Length: {len(_BUSY_BODY)}\r\nRetry-After: {RETRY_AFTER_SECONDS}\r\n".encode()
    + b"Cache-Control: no-store\r\nConnection: close\r\n\r\n"
    + _BUSY_BODY
)


def answer_busy(conn: socket.socket) -> None:
    """503 with Retry-After at once, without reading the request: every handler is busy."""
    try:
        conn.settimeout(LINGER_SECONDS)
        conn.sendall(_BUSY_ANSWER)
    except OSError:
        return  # the client went away
    linger(conn)
