"""The loopback webhook receiver behind `holon serve --listen 127.0.0.1:PORT`.

It only verifies, normalizes and enqueues: a valid delivery is answered 202 as soon as the sink
has kept its envelope (serve's sink is the inbox, on disk), and the decision about it happens
elsewhere. It binds to loopback only, because deliveries reach it through a local forwarder,
never straight from the internet.

Load is bounded and refused out loud, never by a reset (`connections.py`). A body is read in
chunks through the signature check and spooled (to disk past 1 MiB), so an unsigned flood holds
no memory; only a verified body is read into memory and parsed.

Every answer is a small JSON object: `{"status": "accepted", "id": ...}` or `{"error": ...}`. Error
texts are one line and never carry the secret or the body; nothing is printed per request, and
only 5xx answers are reported, through `on_error` (a burst of 503s as one line and a count,
`refusal_log.py`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import tempfile
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from holon.errors import InvalidInput
from holon.gateway.commands import parse_command
from holon.gateway.envelope import EventEnvelope
from holon.gateway.payload import MAX_PAYLOAD_BYTES
from holon.gateway.webhook import SignatureError, SignatureVerifier, verified_delivery
from holon.serve import connections
from holon.serve.connections import (
    DEFAULT_MAX_HANDLERS,
    RETRY_AFTER_SECONDS,
    BoundedServer,
    linger,
)
from holon.serve.inbox import InboxUnavailable
from holon.serve.refusal_log import RefusalLog

PATHS = frozenset({"/", "/webhook"})
# Per socket operation: a stalled client cannot hold a handler thread (or stop()) forever.
REQUEST_TIMEOUT_SECONDS = 15.0
_BODY_CHUNK = 64 * 1024
# An unverified body is held in memory only up to this; the rest is spooled to a temp file.
_SPOOL_MEMORY = 1024 * 1024
# How long stop() waits for requests already accepted before giving up on them.
STOP_GRACE_SECONDS = 10.0
_MESSAGE_LIMIT = 200
# Headers that decide what a delivery is: two copies of one of them is ambiguous, not a choice.
_SINGLE_HEADERS = ("X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery")

Sink = Callable[[EventEnvelope], bool]
ErrorReporter = Callable[[str], None]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or the name localhost."""
    bare = host.strip().removeprefix("[").removesuffix("]")
    if bare.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MESSAGE_LIMIT else flat[: _MESSAGE_LIMIT - 3] + "..."


class _Refusal(Exception):
    """An answer decided before the delivery was accepted: status, one line, extra headers."""

    def __init__(
        self, status: HTTPStatus, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class _Server(BoundedServer):
    """The receiver's server: its handlers find their listener (secrets, sink, limits) here."""

    def __init__(
        self,
        address: tuple[str, int],
        family: socket.AddressFamily,
        listener: WebhookListener,
    ) -> None:
        self.listener = listener
        super().__init__(
            address, family, _Handler, max_handlers=listener.max_handlers, report=listener._report
        )


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    # HTTP/1.1 for Expect: 100-continue (checked before the client sends the body); every
    # answer still closes the connection, so stop() never waits on an idle keep-alive.
    protocol_version = "HTTP/1.1"
    server_version = "holon-webhook"
    sys_version = ""
    timeout = REQUEST_TIMEOUT_SECONDS
    _checked = False
    _body_pending = False
    _length = 0
    _verifier: SignatureVerifier

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: nothing per request on stderr; 5xx answers go to on_error instead."""

    # --- deciding before the body --------------------------------------------------------------

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        # With Expect: 100-continue the check already ran (and answered) in handle_expect_100.
        return self._checked or self._precheck()

    def handle_expect_100(self) -> bool:
        if not self._precheck():
            return False
        return super().handle_expect_100()

    def _precheck(self) -> bool:
        """Path, method and framing, before a byte of the body is read; False once answered."""
        self._checked = True
        te = self.headers.get("Transfer-Encoding")
        cl = self.headers.get("Content-Length")
        self._body_pending = bool(te) or (cl is not None and cl.strip() not in ("", "0"))
        try:
            if self.server.expired(self.connection):
                raise _Refusal(HTTPStatus.REQUEST_TIMEOUT, "the request head came too slowly")
            self._length = self._check_request(te)
        except _Refusal as refusal:
            self._refuse(refusal)
            return False
        return True

    def _check_request(self, transfer_encoding: str | None) -> int:
        if urlsplit(self.path).path not in PATHS:
            raise _Refusal(HTTPStatus.NOT_FOUND, "not found: deliveries go to POST /webhook")
        if self.command != "POST":
            raise _Refusal(
                HTTPStatus.METHOD_NOT_ALLOWED, "method not allowed: use POST", {"Allow": "POST"}
            )
        lengths = self.headers.get_all("Content-Length") or []
        if transfer_encoding is not None and lengths:
            raise _Refusal(HTTPStatus.BAD_REQUEST, "both Transfer-Encoding and Content-Length")
        if not lengths:
            raise _Refusal(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        values = {value.strip() for value in lengths}
        if len(values) != 1:
            raise _Refusal(HTTPStatus.BAD_REQUEST, "conflicting Content-Length headers")
        (value,) = values
        if not value.isascii() or not value.isdigit():
            raise _Refusal(HTTPStatus.BAD_REQUEST, "Content-Length is not a number")
        length = int(value)
        limit = self.server.listener.max_body
        if length > limit:
            raise _Refusal(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"payload of {length} bytes is over the {limit}-byte limit",
            )
        for name in _SINGLE_HEADERS:
            if len(self.headers.get_all(name) or []) > 1:
                raise _Refusal(HTTPStatus.BAD_REQUEST, f"more than one {name} header")
        try:
            # A missing or malformed signature is refused before a byte of the body is read.
            self._verifier = SignatureVerifier(
                self.headers.get("X-Hub-Signature-256"), self.server.listener.secrets
            )
        except SignatureError as exc:
            raise _Refusal(HTTPStatus.UNAUTHORIZED, str(exc)) from None
        if not self.headers.get("X-GitHub-Event"):
            raise _Refusal(HTTPStatus.BAD_REQUEST, "delivery has no X-GitHub-Event header")
        return length

    # --- the delivery --------------------------------------------------------------------------

    def do_POST(self) -> None:
        listener = self.server.listener
        try:
            body = self._read_body()
            envelope = verified_delivery(
                dict(self.headers.items()),
                body,
                received_at=listener.clock(),
                mention=listener.mention,
            )
            del body
        except _Refusal as refusal:
            self._refuse(refusal)
            return
        except SignatureError as exc:
            self._refuse(_Refusal(HTTPStatus.UNAUTHORIZED, str(exc)))
            return
        except InvalidInput as exc:
            self._refuse(_Refusal(HTTPStatus.BAD_REQUEST, str(exc)))
            return
        except Exception as exc:
            self._internal_error(exc, "reading the delivery")
            return
        try:
            accepted = listener.sink(envelope)
        except InboxUnavailable as exc:
            listener.refusals.refused(
                "cannot store deliveries",
                f"webhook listener: cannot keep {envelope.id} ({exc}); answered 503",
            )
            self._refuse(_busy("cannot store the delivery now: retry later"))
            return
        except Exception as exc:
            self._internal_error(exc, f"queueing {envelope.id}")
            return
        if not accepted:
            listener.refusals.refused(
                "queue full", f"webhook listener: queue full, {envelope.id} refused with 503"
            )
            self._refuse(_busy("queue full: retry later"))
            return
        listener.refusals.accepted()
        self._answer(HTTPStatus.ACCEPTED, {"status": "accepted", "id": envelope.id})

    def _read_body(self) -> bytes:
        """The body, read in chunks through the signature check; returned only once verified.
        Until then at most `_SPOOL_MEMORY` of it is in memory, the rest in an unlinked file."""
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_MEMORY) as spool:
            left = self._length
            while left:
                try:
                    chunk = self.rfile.read(min(_BODY_CHUNK, left))
                except TimeoutError:
                    raise _Refusal(
                        HTTPStatus.REQUEST_TIMEOUT, "timed out reading the body"
                    ) from None
                if not chunk:
                    if self.server.expired(self.connection):
                        deadline = connections.REQUEST_DEADLINE_SECONDS
                        raise _Refusal(
                            HTTPStatus.REQUEST_TIMEOUT,
                            f"the request took longer than {deadline:g}s",
                        )
                    raise _Refusal(
                        HTTPStatus.BAD_REQUEST, "body is shorter than its Content-Length"
                    )
                self._verifier.update(chunk)
                spool.write(chunk)
                left -= len(chunk)
            self._body_pending = False
            self._verifier.verify()
            spool.seek(0)
            return spool.read()

    # --- answers -------------------------------------------------------------------------------

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (bad request line, long headers, ...) as JSON too."""
        status = HTTPStatus(code)
        self._answer(status, {"error": _one_line(message or status.phrase)})

    def _internal_error(self, exc: Exception, doing: str) -> None:
        # Type only: an exception's text may quote the payload (pydantic does).
        self.server.listener._report(
            f"webhook listener: unexpected {type(exc).__name__} {doing}; answered 500"
        )
        self._refuse(_Refusal(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error"))

    def _refuse(self, refusal: _Refusal) -> None:
        self._answer(refusal.status, {"error": _one_line(refusal.message)}, refusal.headers)

    def _answer(
        self, status: HTTPStatus, content: dict[str, str], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(content).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            # The client went away; there is nobody left to answer.
            self.close_connection = True
            return
        if self._body_pending:
            self._linger()

    def _linger(self) -> None:
        self._body_pending = False
        linger(self.connection)


def _busy(message: str) -> _Refusal:
    return _Refusal(
        HTTPStatus.SERVICE_UNAVAILABLE, message, {"Retry-After": str(RETRY_AFTER_SECONDS)}
    )


class WebhookListener:
    """Receives GitHub webhook deliveries over HTTP on loopback and hands envelopes to `sink`.

    `sink` must only enqueue (it runs on the request thread): True answers 202, False (queue
    full) answers 503 with Retry-After. `on_error` hears about every 5xx answer.
    """

    def __init__(
        self,
        host: str,
        port: int,
        secrets: Sequence[str],
        sink: Sink,
        *,
        max_body: int = MAX_PAYLOAD_BYTES,
        mention: str | None = "holon",
        clock: Callable[[], datetime] = _utc_now,
        on_error: ErrorReporter | None = None,
        max_handlers: int = DEFAULT_MAX_HANDLERS,
    ) -> None:
        if not is_loopback(host):
            raise ValueError(
                f"webhook listener: {host!r} is not a loopback address; it only listens on "
                "127.0.0.0/8, ::1 or localhost (put a forwarder in front for remote deliveries)"
            )
        if not 0 <= port <= 65535:
            raise ValueError(f"webhook listener: port {port} is not in 0..65535")
        if isinstance(secrets, str):
            # A lone string is a sequence of one-character "secrets": almost anything would sign.
            raise TypeError("webhook listener: secrets must be a list of strings, not a string")
        if not secrets or not all(secrets):
            raise ValueError("webhook listener: at least one non-empty webhook secret is required")
        if not 1 <= max_body <= MAX_PAYLOAD_BYTES:
            raise ValueError(
                f"webhook listener: max_body must be in 1..{MAX_PAYLOAD_BYTES}, got {max_body}"
            )
        if max_handlers < 1:
            raise ValueError(
                f"webhook listener: max_handlers must be at least 1, got {max_handlers}"
            )
        parse_command(None, mention=mention)  # a bad mention fails here, not on every comment
        bare = host.strip().removeprefix("[").removesuffix("]")
        self.host = "127.0.0.1" if bare.lower() == "localhost" else bare
        self.port = port
        self.secrets: tuple[str, ...] = tuple(secrets)
        self.sink = sink
        self.max_body = max_body
        self.mention = mention
        self.clock = clock
        self.on_error = on_error
        self.max_handlers = max_handlers
        self._lock = threading.Lock()
        # A burst of 503s is one line and a count, not a line per refused delivery.
        self.refusals = RefusalLog(self._report)
        self._server: _Server | None = None
        self._threads: list[threading.Thread] = []

    @property
    def address(self) -> tuple[str, int] | None:
        """The bound (host, port) while serving, else None."""
        server = self._server
        return None if server is None else (server.server_name, server.server_port)

    def start(self) -> tuple[str, int]:
        """Bind (port 0 picks a free one), serve on a daemon thread, return the bound address."""
        with self._lock:
            if self._server is not None:
                raise RuntimeError("webhook listener is already running")
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            server = _Server((self.host, self.port), family, self)
            name = f"holon-webhook-{server.server_port}"
            threads = [
                threading.Thread(
                    target=server.serve_forever,
                    kwargs={"poll_interval": 0.1},
                    name=name,
                    daemon=True,
                ),
                threading.Thread(
                    target=server.watch_deadlines, name=f"{name}-deadlines", daemon=True
                ),
            ]
            for thread in threads:
                thread.start()
            self._server, self._threads = server, threads
            return server.server_name, server.server_port

    def stop(self) -> None:
        """Stop accepting, wait for requests in flight, close the socket. Safe to call twice."""
        with self._lock:
            server, threads = self._server, self._threads
            self._server, self._threads = None, []
        if server is None:
            return
        server.closing.set()  # an accept waiting for a free handler gives up
        server.shutdown()  # returns once serve_forever has left its loop: no more accepts
        server.server_close()  # the listening socket; new connections are now refused
        for thread in threads:
            thread.join()
        left = server.wait_idle(STOP_GRACE_SECONDS)
        if left:
            self._report(
                f"webhook listener: {left} request(s) still running after "
                f"{STOP_GRACE_SECONDS:g}s; stopped without them"
            )
        self.refusals.flush()

    def __enter__(self) -> WebhookListener:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _report(self, message: str) -> None:
        if self.on_error is None:
            return
        # A failing reporter must not take the request (or stop()) down with it.
        with contextlib.suppress(Exception):
            self.on_error(message)
