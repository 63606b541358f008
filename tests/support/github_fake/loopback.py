"""GitHub's REST API served on 127.0.0.1 from memory, for tests that run `holon` as a
subprocess (`GITHUB_API_URL=server.url`) or want real HTTP under the client.

    with LoopbackGitHub() as server:                       # or the `github_server` fixture
        repo = server.state.repos["octocat/Hello-World"]
        repo.add_issue("Crash on start")
        ...run the code under test against server.url...
        assert server.count("issues/create-comment") == 1
        assert repo.comments[...].body == ...

Only routes of GitHub's REST description that the fake implements are answered; any other
request gets 501 and is recorded as a violation, which fails the test at teardown. Unknown
objects get GitHub's 404 body. `fail(operation, status, ...)` makes the next calls to an
operation fail, for the error paths; `faults` is a schedule of failures by request index or
operation pattern and method (`faults.py`: 5xx, accepted then timed out, secondary rate limit,
403, 404). `hold(operation, parties, query)` makes the next `parties` requests to an operation
(with that query) wait for each other before any is answered: racing processes forced to
interleave (both look, then both act). With `token`, a request without it gets GitHub's 401.
The one path outside the API is `/_blobs/<token>`: the signed URL an artifact download
redirects to (`artifacts.py`), served without authorization and recorded as operation `blob`.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import tests.support.github_fake.listing  # noqa: F401  (handlers: repository-wide listings)
from tests.support.github_fake import issues, repo_data, review_comments  # noqa: F401  (handlers)
from tests.support.github_fake.artifacts import BLOB, BLOBS, Redirect
from tests.support.github_fake.calls import Call, CallLog
from tests.support.github_fake.faults import Drop, FaultSchedule
from tests.support.github_fake.render import Renderer
from tests.support.github_fake.request import HANDLERS, Request
from tests.support.github_fake.routes import routes
from tests.support.github_fake.state import GitHubState, Missing, Refused

DOCS = "https://docs.github.com/rest"


def error_body(
    status: int, message: str, errors: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "documentation_url": DOCS, "status": str(status)}
    if errors is not None:  # a 422's validation errors, listed as GitHub lists them
        body["errors"] = errors
    return body


class LoopbackGitHub(CallLog):
    def __init__(
        self,
        prefix: str = "",
        token: str | None = None,
        login: str = "github-actions[bot]",
        repos: tuple[str, ...] = ("octocat/Hello-World",),
    ) -> None:
        super().__init__()
        self.prefix = prefix.rstrip("/")
        self.token = token
        self.login = login
        self.state = GitHubState(repos)
        self.lock = threading.Lock()
        self._failures: dict[str, list[tuple[tuple[int, Any, dict[str, str]], bool]]] = {}
        self.faults = FaultSchedule()
        self.holds: list[Hold] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False  # idle keep-alive connections must not hold stop()
        self._server.github = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{self.prefix}"
        self.render = Renderer(self.url)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> LoopbackGitHub:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def fail(
        self,
        operation: str,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
        done: bool = False,
    ) -> None:
        """The next `times` calls to `operation` get `status` (GitHub's error body unless
        `body` is given) and do nothing; with `done`, they do it first (GitHub accepted the
        request and its answer was lost: a 5xx after the effect)."""
        routes().find(operation)
        reply = (status, body or error_body(status, f"HTTP {status}"), dict(headers or {}))
        self._failures.setdefault(operation, []).extend([(reply, done)] * times)

    def hold(
        self, operation: str, parties: int, query: dict[str, str] | None = None, timeout: float = 60
    ) -> Hold:
        """The next `parties` requests to `operation` whose query has `query`'s values are
        each done, then their answers held (outside the fake's lock) until all of them are
        done: none of them sees another's caller act on its answer. One that waits `timeout`
        seconds for the others breaks the hold and is answered (`Hold.met` then says the
        interleaving was not forced)."""
        routes().find(operation)
        held = Hold(operation, dict(query or {}), threading.Barrier(parties, timeout=timeout))
        self.holds.append(held)
        return held

    def handle(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        answer = self._answer(method, target, headers, raw)
        if self.holds:
            url = urllib.parse.urlsplit(target)
            found = routes().match(method, url.path.removeprefix(self.prefix))
            operation = found[0].operation if found else None
            query = urllib.parse.parse_qs(url.query)
            with self.lock:
                held = next((h for h in self.holds if h.matches(operation, query)), None)
                if held is not None:
                    held.arrived += 1
            if held is not None:
                try:
                    held.barrier.wait()
                except threading.BrokenBarrierError:
                    held.broken = True
        return answer

    def _answer(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        url = urllib.parse.urlsplit(target)
        if url.path.startswith(BLOBS):
            return self._blob(method, url, headers)
        path = url.path.removeprefix(self.prefix) if url.path.startswith(self.prefix) else ""
        found = routes().match(method, path) if path else None
        operation = found[0].operation if found else None
        with self.lock:
            self.calls.append(
                Call(
                    method,
                    path or url.path,
                    operation,
                    urllib.parse.parse_qs(url.query),
                    raw,
                    headers,
                )
            )
            if found is None:
                return self._refuse(f"{method} {url.path}: a route GitHub's REST API does not have")
            route, params = found
            if route.operation not in HANDLERS:
                return self._refuse(f"{method} {url.path}: {route.operation} is not in the fake")
            if self.token and headers.get("authorization") not in (
                f"token {self.token}",
                f"Bearer {self.token}",
            ):
                return 401, error_body(401, "Bad credentials"), {}
            failures = self._failures.get(route.operation)
            failure, done = failures.pop(0) if failures else (None, False)
            if failure is not None and not done:
                return failure
            fault = self.faults.match(len(self.calls) - 1, method, route.operation)
            if fault is not None and fault.before_effect:
                return fault.reply()
            try:
                body = json.loads(raw) if raw else None
                request = Request(
                    self.state,
                    self.render,
                    route.operation,
                    self.login,
                    params,
                    urllib.parse.parse_qs(url.query),
                    body,
                )
                status, answer = HANDLERS[route.operation](request)
            except Missing:
                return 404, error_body(404, "Not Found"), {}
            except Refused as refused:
                body = error_body(refused.status, refused.message, refused.errors)
                return refused.status, body, {}
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                return 422, error_body(422, f"Invalid request: {exc.__class__.__name__}"), {}
            if fault is not None:  # done, and the answer is lost
                return 0, Drop(fault.stall), {}
            if isinstance(answer, Redirect):
                return failure or (status, None, {"Location": answer.location})
            return failure or (status, answer, {})

    def _blob(
        self, method: str, url: urllib.parse.SplitResult, headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        """A signed download URL: outside the API, no authorization needed (a storage host's)."""
        query = urllib.parse.parse_qs(url.query)
        with self.lock:
            self.calls.append(Call(method, url.path, BLOB, query, b"", headers))
            data = self.state.blobs.get(url.path.removeprefix(BLOBS))
        if method != "GET" or data is None:
            return 404, error_body(404, "BlobNotFound"), {}
        return 200, data, {"Content-Type": "application/zip"}

    def _refuse(self, violation: str) -> tuple[int, Any, dict[str, str]]:
        self.violations.append(violation)
        return 501, error_body(501, f"not answered by the GitHub fake: {violation}"), {}


@dataclass
class Hold:
    """Requests to `operation` with `query` held until `barrier.parties` of them arrived."""

    operation: str
    query: dict[str, str]
    barrier: threading.Barrier
    arrived: int = 0
    broken: bool = False

    def matches(self, operation: str | None, query: dict[str, list[str]]) -> bool:
        if operation != self.operation or self.arrived >= self.barrier.parties:
            return False
        return all(query.get(k) == [v] for k, v in self.query.items())

    @property
    def met(self) -> bool:
        """Whether every party arrived and they went on together."""
        return self.arrived == self.barrier.parties and not self.broken


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as GitHub; every answer has a Content-Length
    # Headers and body go out in two writes: with Nagle on, the body waits for the client's
    # delayed ACK (~40 ms a request on Linux), a latency of this server, not of GitHub.
    disable_nagle_algorithm = True
    timeout = 10  # an idle kept-alive connection ends its thread

    def _serve(self) -> None:
        github: LoopbackGitHub = self.server.github  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, body, extra = github.handle(self.command, self.path, headers, raw)
        if isinstance(body, Drop):
            time.sleep(body.stall)
            self.close_connection = True  # no answer: the client's read fails
            return
        if not isinstance(body, bytes):  # a blob is sent as it is
            body = b"" if body is None else json.dumps(body).encode()
        data = body
        self.send_response(status)
        if "Content-Type" not in extra:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the calls are recorded, not printed."""
