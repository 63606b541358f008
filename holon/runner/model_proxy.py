"""The model key proxy: the host side of a containerized agent's only way to its model.

One proxy per run: an HTTP/1.1 server on a unix socket in a fresh private directory (0700, the
invoking user's), which the docker backend mounts at `/holon/proxy` in a container that has no
key and no other network. It forwards only the routes it was given (`model_routes.py`: a POST to
the provider's messages or chat-completions path) to the configured upstream, with every header
the container sent dropped but a few harmless ones, and the real key added. What comes back is
streamed to the agent as it arrives, and the usage each answer reports is metered
(`model_meter.py`) for the run record. Past an optional token cap, requests are refused with a
JSON error before anything is sent.

Bounded: a request body of at most 8 MiB with a Content-Length, a minute to send it, a connect
and a per-read timeout upstream and a deadline for the whole exchange. Its log lines and error
answers name paths, statuses and exception types only: never a header, so never the key.

The upstream goes through `requests`' transport adapter (already a dependency): its pooled
keep-alive connections keep the added latency per request to the proxy's own parsing (about a
millisecond: `bench.proxy`), and the host's proxy variables and CA bundle are honoured as
requests reads them, once per route. No Session: redirects are never followed (a redirected POST
would carry the key elsewhere), and no cookie or ~/.netrc credential is ever added.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import socketserver
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import requests
import requests.utils
import urllib3.exceptions
from requests.adapters import HTTPAdapter

from holon.runner.model_meter import Meter, usage_of
from holon.runner.model_routes import Route
from holon.runner.record import ModelUsage

log = logging.getLogger(__name__)

SOCKET_NAME = "model.sock"
MAX_BODY = 8 * 1024 * 1024
DISCARD_LIMIT = 64 * 1024  # a refused request's body read and dropped to keep its connection
METER_LIMIT = 16 * 1024 * 1024  # bytes of an answer kept for metering; the rest is only passed on
_SOCKET_PATH_MAX = 107  # sun_path is 108 bytes, the terminating NUL included

# Headers of the agent's request passed upstream; everything else (authorization, x-api-key,
# api-key, cookies, proxy headers, hop-by-hop headers) is dropped.
REQUEST_HEADERS = ("content-type", "accept", "anthropic-version", "anthropic-beta", "user-agent")
# Headers of the answer passed back: what a provider client acts on (retries, request ids).
RESPONSE_HEADERS = ("content-type", "retry-after", "retry-after-ms", "request-id", "x-request-id")
RESPONSE_PREFIXES = ("anthropic-ratelimit-", "x-ratelimit-")


@dataclass(frozen=True)
class ProxyLimits:
    max_body: int = MAX_BODY
    request_timeout: float = 60.0  # to send a request's headers and body, and keep-alive idle
    connect_timeout: float = 10.0
    read_timeout: float = 600.0  # between two reads of an answer: a long answer takes minutes
    deadline: float = 30 * 60.0  # one whole exchange, the answer's streaming included


@dataclass(frozen=True)
class _Upstream:
    """What requests would read from the environment for a route on every request (proxy
    variables, NO_PROXY, the CA bundle), read once when the proxy is made."""

    proxies: dict[str, str]
    verify: bool | str


def _upstream(url: str) -> _Upstream:
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    return _Upstream(requests.utils.get_environ_proxies(url), bundle or True)


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    block_on_close = False  # stop() ends the connections itself and waits a bounded time
    # socketserver listens with a backlog of 5: an agent's burst of parallel requests on a
    # busy machine found it full, and a client with a timeout (non-blocking) connect gets
    # EAGAIN at once on a unix socket instead of waiting for the accept.
    request_queue_size = 128
    proxy: ModelProxy

    def handle_error(self, request: Any, client_address: Any) -> None:
        # socketserver prints a traceback on the step's stderr; an agent that hung up is no
        # error of the proxy's, and anything else is one line naming its type, never a value.
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            log.info("model proxy: a connection ended: %s", type(error).__name__)
        else:
            log.warning("model proxy: a request failed: %s", type(error).__name__)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    server_version = "holon-model-proxy"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        # Bounds sending a request and an idle keep-alive connection alike.
        self.connection.settimeout(self.server.proxy.limits.request_timeout)
        self.server.proxy._opened(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.proxy._closed(self.connection)

    def do_POST(self) -> None:
        self.server.proxy._forward(self)

    def _refuse(self) -> None:
        self.server.proxy._refuse_other(self)

    do_GET = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _refuse

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # http.server's own refusals (a bad request line, an unknown method) as JSON, never
        # quoting the request.
        _answer(self, code, "invalid_request_error", f"HTTP {code}", close=True)

    def address_string(self) -> str:
        return "agent"  # a unix peer has no address

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the proxy logs its own secret-free lines


def _answer(
    handler: BaseHTTPRequestHandler,
    status: int,
    kind: str,
    message: str,
    *,
    close: bool = False,
    extra: Mapping[str, str] | None = None,
) -> None:
    """A JSON error in the envelope both providers' clients read (`error.type: message`)."""
    body = json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    handler.send_response_only(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    for name, value in (extra or {}).items():
        handler.send_header(name, value)
    if close:
        handler.send_header("connection", "close")
        handler.close_connection = True
    handler.end_headers()
    with contextlib.suppress(OSError):
        handler.wfile.write(body)


class ModelProxy:
    """A running proxy: `start()`, hand `directory` to the container, `stop()`, read `usage()`."""

    def __init__(
        self,
        routes: Mapping[str, Route],
        *,
        token_cap: int | None = None,
        limits: ProxyLimits | None = None,
        parent: Path | None = None,
    ) -> None:
        if not routes:
            raise ValueError("a model proxy needs at least one route")
        self.routes = dict(routes)
        self.token_cap = token_cap
        self.limits = limits or ProxyLimits()
        # The adapter itself, not a Session: no cookies, no ~/.netrc, no redirects followed (a
        # redirected POST would carry the key elsewhere), no per-request environment walk.
        self._adapter = HTTPAdapter(pool_connections=4, pool_maxsize=16, max_retries=0)
        self._upstreams = {route.upstream: _upstream(route.upstream) for route in routes.values()}
        self._parent = parent
        self._meter = Meter()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._handlers: set[threading.Thread] = set()
        self.directory: Path | None = None

    def __repr__(self) -> str:
        return f"ModelProxy(paths={sorted(self.routes)!r}, directory={self.directory!r})"

    @property
    def socket_path(self) -> Path:
        if self.directory is None:
            raise RuntimeError("the model proxy is not started")
        return self.directory / SOCKET_NAME

    def usage(self) -> ModelUsage:
        return self._meter.usage()

    def __enter__(self) -> ModelProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        # mkdtemp makes the directory 0700 and the invoking user's: the container runs as them.
        directory = Path(tempfile.mkdtemp(prefix="holon-proxy-", dir=self._parent))
        if len(str(directory / SOCKET_NAME)) > _SOCKET_PATH_MAX:
            # A deep temp dir would not fit a socket address; /tmp always does.
            directory.rmdir()
            directory = Path(tempfile.mkdtemp(prefix="holon-proxy-", dir="/tmp"))
        self.directory = directory
        try:
            server = _Server(str(directory / SOCKET_NAME), _Handler)
            os.chmod(directory / SOCKET_NAME, 0o600)
        except BaseException:
            self._remove_directory()
            raise
        server.proxy = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True
        )
        self._thread.name = "holon-model-proxy"
        self._thread.start()

    def stop(self, grace: float = 2.0) -> None:
        """Stop listening, end the connections still open and remove the socket's directory."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            with self._lock:
                connections = list(self._connections)
                handlers = list(self._handlers)
            for connection in connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            until = time.monotonic() + grace
            for thread in handlers:
                thread.join(max(0.0, until - time.monotonic()))
        if self._thread is not None:
            self._thread.join(grace)
            self._thread = None
        self._adapter.close()
        self._remove_directory()

    def _remove_directory(self) -> None:
        if self.directory is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.directory / SOCKET_NAME).unlink()
            with contextlib.suppress(OSError):
                self.directory.rmdir()

    def _opened(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.add(connection)
            self._handlers.add(threading.current_thread())

    def _closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)
            self._handlers.discard(threading.current_thread())

    # --- one request -----------------------------------------------------------------------

    def _refuse_other(self, handler: _Handler) -> None:
        self._discard(handler)
        if handler.command == "HEAD":
            handler.close_connection = True  # the answer has a body a HEAD's client won't read
        if handler.path in self.routes:
            _answer(
                handler, 405, "invalid_request_error", "only POST is forwarded",
                extra={"allow": "POST"},
            )  # fmt: skip
        else:
            _answer(handler, 404, "not_found_error", "the model proxy forwards no such path")
        log.info("model proxy: refused a %s request (%s)", handler.command, "not forwarded")

    def _discard(self, handler: _Handler) -> None:
        """Read a refused request's small body, so the connection stays usable; a larger one
        (or one without a length) is left unread and the connection closed after the answer."""
        raw = handler.headers.get("content-length", "0").strip() or "0"
        length = int(raw) if raw.isdigit() else -1
        if handler.headers.get("transfer-encoding") or not 0 <= length <= DISCARD_LIMIT:
            handler.close_connection = True
            return
        try:
            handler.rfile.read(length)
        except OSError:
            handler.close_connection = True

    def _forward(self, handler: _Handler) -> None:
        started = time.monotonic()
        route = self.routes.get(handler.path)
        if route is None:
            self._discard(handler)
            _answer(handler, 404, "not_found_error", "the model proxy forwards no such path")
            log.info("model proxy: refused a POST to an unknown path (404)")
            return
        body = self._read_body(handler)
        if body is None:
            return
        cap = self.token_cap
        if cap is not None and self._meter.tokens >= cap:
            used = self._meter.tokens
            _answer(
                handler,
                403,
                "token_cap_reached",
                f"the run's model token cap of {cap} is spent ({used} tokens used); "
                "the proxy forwards no more requests",
            )
            log.info("model proxy: refused a request past the token cap (%d of %d)", used, cap)
            return
        headers = {
            name: value
            for name in REQUEST_HEADERS
            if (value := handler.headers.get(name)) is not None
        }
        headers.setdefault("content-type", "application/json")
        headers["accept-encoding"] = "identity"
        headers[route.auth_header] = route.auth_value
        upstream = self._upstreams[route.upstream]
        request = requests.PreparedRequest()
        try:
            request.prepare(method="POST", url=route.upstream, headers=headers, data=body)
            response = self._adapter.send(
                request,
                stream=True,
                timeout=(self.limits.connect_timeout, self.limits.read_timeout),
                verify=upstream.verify,
                proxies=upstream.proxies,
            )
        except requests.Timeout:
            self._failed(handler, route, 504, "the model provider did not answer in time")
            return
        except requests.ConnectionError:
            self._failed(handler, route, 502, "could not reach the model provider")
            return
        except requests.RequestException as exc:
            # Never str(exc): requests puts header values (the key) into some of its messages.
            self._failed(handler, route, 502, f"request failed ({type(exc).__name__})")
            return
        with response:
            self._relay(handler, route, response, started)

    def _read_body(self, handler: _Handler) -> bytes | None:
        if handler.headers.get("transfer-encoding"):
            _answer(handler, 411, "invalid_request_error", "send a Content-Length", close=True)
            return None
        raw = handler.headers.get("content-length")
        try:
            length = int(raw) if raw is not None else -1
        except ValueError:
            length = -1
        if length < 0:
            _answer(handler, 411, "invalid_request_error", "send a Content-Length", close=True)
            return None
        if length > self.limits.max_body:
            # Up to twice the bound is read and dropped, so the client, still sending, reads
            # the answer instead of a broken pipe; past that the connection is just closed.
            drained = length <= 2 * self.limits.max_body and _skip(handler, length)
            _answer(
                handler,
                413,
                "request_too_large",
                f"the request body is larger than {self.limits.max_body} bytes",
                close=not drained,
            )
            log.info("model proxy: refused a %d-byte request body", length)
            return None
        try:
            body = handler.rfile.read(length)
        except OSError:
            body = b""
        if len(body) != length:
            handler.close_connection = True
            return None
        return body

    def _failed(self, handler: _Handler, route: Route, status: int, message: str) -> None:
        _answer(handler, status, "proxy_error", f"{route.provider}: {message}")
        log.warning("model proxy: %s %s (%d)", route.provider, message, status)

    def _relay(
        self, handler: _Handler, route: Route, response: requests.Response, started: float
    ) -> None:
        handler.send_response_only(response.status_code)
        for name, value in response.headers.items():
            lowered = name.lower()
            if lowered in RESPONSE_HEADERS or lowered.startswith(RESPONSE_PREFIXES):
                handler.send_header(lowered, value)
        length = response.headers.get("content-length")
        encoded = bool(response.headers.get("content-encoding"))
        # Decoded bytes are relayed (metering reads them), so a coded body's length is unknown.
        chunked = length is None or encoded
        if chunked:
            handler.send_header("transfer-encoding", "chunked")
        else:
            handler.send_header("content-length", str(length))
        kept: list[bytes] = []
        size = 0
        complete = metered = False
        content_type = response.headers.get("content-type", "")
        deadline = started + self.limits.deadline
        pending: bytes | None = None

        def send(chunk: bytes) -> None:
            if agent_gone:
                return  # the answer is still read to its end: the run's usage counts it
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)

        agent_gone = False
        try:
            # The agent may have given up (its read timeout) while the upstream answered.
            handler.end_headers()
        except OSError:
            agent_gone = True
            log.info("model proxy: the agent went away before the %s answer", route.provider)
        try:
            for chunk in _chunks(response):
                if size < METER_LIMIT:
                    kept.append(chunk)
                size += len(chunk)
                if pending is not None:
                    send(pending)
                pending = chunk  # one chunk behind: see below
                if time.monotonic() > deadline:
                    raise TimeoutError
            # Metered before the answer's last bytes reach the agent: once the agent has its
            # answers, the run's usage counts them.
            self._meter.add(usage_of(b"".join(kept), content_type))
            metered = True
            if pending is not None:
                send(pending)
            if chunked and not agent_gone:
                handler.wfile.write(b"0\r\n\r\n")
            complete = not agent_gone
        except (requests.RequestException, urllib3.exceptions.HTTPError):
            log.warning("model proxy: the %s answer broke off", route.provider)
        except TimeoutError:
            log.warning("model proxy: the %s answer passed the deadline", route.provider)
        except OSError:
            log.info("model proxy: the agent went away during the %s answer", route.provider)
        if not complete:
            handler.close_connection = True  # the agent sees a truncated answer, never a whole
        if not metered:
            self._meter.add(usage_of(b"".join(kept), content_type))
        log.info(
            "model proxy: %s %d, %d bytes in %.0f ms",
            route.provider,
            response.status_code,
            size,
            (time.monotonic() - started) * 1000,
        )


def _skip(handler: BaseHTTPRequestHandler, length: int) -> bool:
    """Read and drop `length` bytes of the request; False when the connection broke."""
    try:
        while length > 0:
            chunk = handler.rfile.read(min(length, 64 * 1024))
            if not chunk:
                return False
            length -= len(chunk)
    except OSError:
        return False
    return True


def _chunks(response: requests.Response) -> Iterator[bytes]:
    for chunk in response.raw.stream(64 * 1024, decode_content=True):
        if chunk:
            yield chunk
