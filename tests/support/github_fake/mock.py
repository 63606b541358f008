"""GitHub faked in-process with `responses`: documented bodies, every call recorded.

    fake.on("issues/create-comment")                      # GitHub's example body, 201
    fake.on("pulls/merge", status=502)                    # then a failure: replies go in order,
    fake.on("pulls/merge", body={"merged": True, ...})    # the last one repeats
    ...the code under test...
    assert fake.operations() == ["issues/create-comment"]

Only routes of GitHub's REST description can be registered (`UnknownRoute` otherwise). A request
no registered route answers fails with `requests.ConnectionError` and is a recorded violation
the fixture turns into a failed test, even when the code under test caught the error.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import requests
import responses

from tests.support.github_fake.calls import Call, CallLog
from tests.support.github_fake.routes import example, routes

_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
DEFAULT: Any = object()


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any  # JSON-able, or bytes/str sent as they are; None for no body
    headers: dict[str, str]


class GitHubFake(CallLog):
    def __init__(self, base_url: str = "https://api.github.com") -> None:
        super().__init__()
        self.base_url = base_url.rstrip("/")
        self.prefix = urllib.parse.urlsplit(self.base_url).path
        self.mock = responses.RequestsMock(assert_all_requests_are_fired=False)
        self._replies: dict[str, list[Reply]] = defaultdict(list)
        base = urllib.parse.urlsplit(self.base_url)
        port = f":{base.port}" if base.port else r"(?::443|:80)?"  # PyGithub spells the port
        self.pattern = re.compile(
            re.escape(f"{base.scheme}://{base.hostname}")
            + port
            + re.escape(self.prefix)
            + r"(?:[/?].*)?\Z"
        )
        for method in _METHODS:
            self.mock.add_callback(method, self.pattern, callback=self._answer)

    def __enter__(self) -> GitHubFake:
        self.mock.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.mock.stop()
        # Requests to another host never reached our callback: responses refused them itself.
        for call in self.mock.calls:
            url = str(call.request.url)
            refused = isinstance(call.response, requests.ConnectionError)
            if refused and not self.pattern.match(url):
                self.violations.append(f"{call.request.method} {url}: not GitHub")
        self.mock.reset()

    def on(
        self,
        route: str,
        status: int | None = None,
        body: Any = DEFAULT,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer `route` ("METHOD /path/{template}" or an operation id) with `status` and
        `body`, GitHub's documented example for whichever is not given."""
        found = routes().find(route)
        documented_status, documented_body = example(found, self.base_url)
        if body is DEFAULT:
            body = documented_body if status is None or status < 300 else _error_body(status)
        reply = Reply(status or documented_status, body, dict(headers or {}))
        self._replies[found.key].append(reply)

    def _answer(self, request: requests.PreparedRequest) -> Any:
        url = urllib.parse.urlsplit(str(request.url))
        path = url.path.removeprefix(self.prefix) if url.path.startswith(self.prefix) else ""
        method = str(request.method)
        body = request.body.encode() if isinstance(request.body, str) else request.body or b""
        found = routes().match(method, path) if path else None
        self.calls.append(
            Call(
                method,
                path or url.path,
                found[0].operation if found else None,
                urllib.parse.parse_qs(url.query),
                bytes(body),
                dict(request.headers),
            )
        )
        if found is None:
            return self._refuse(f"{method} {url.path}: a route GitHub's REST API does not have")
        queue = self._replies.get(found[0].key)
        if not queue:
            return self._refuse(f"{method} {url.path}: {found[0].key} has no reply registered")
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        headers = {"Content-Type": "application/json; charset=utf-8", **reply.headers}
        if reply.body is None or isinstance(reply.body, bytes | str):
            return reply.status, headers, reply.body or b""
        return reply.status, headers, json.dumps(reply.body)

    def _refuse(self, violation: str) -> requests.ConnectionError:
        self.violations.append(violation)
        return requests.ConnectionError(f"refused by the GitHub fake: {violation}")


def _error_body(status: int) -> dict[str, str]:
    """GitHub's error shape: a message and where the documentation is."""
    message = {
        401: "Bad credentials",
        403: "Resource not accessible by integration",
        404: "Not Found",
        409: "Conflict",
        422: "Validation Failed",
    }.get(status)
    return {
        "message": message or f"HTTP {status}",
        "documentation_url": "https://docs.github.com/rest",
    }
