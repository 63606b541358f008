"""Which failed GitHub requests are sent again, after how long, and who hears about the wait.

PyGithub's default retry sends POST again on a 5xx, and urllib3's sends PUT and DELETE again:
a comment posted twice, a merge repeated blindly. Holon's policy:

- a 5xx, or no answer after the request went out, is retried only for GET, HEAD and OPTIONS.
  PUT (a merge, a file), DELETE (a label) and the rest are not: GitHub may have done them, and
  the caller reads the state before deciding again (`errors.ServerError` says so);
- a request that never reached GitHub (the connection failed) is retried whatever its method;
- a rate-limited request (403 or 429 with `Retry-After`, `x-ratelimit-remaining: 0` or
  GitHub's rate-limit message) is retried whatever its method, since GitHub refused it without
  doing it: after `Retry-After` seconds, else until `x-ratelimit-reset`, else a minute (GitHub's
  advice), never longer than `max_wait`; a longer wait raises `RateLimited` at once.

Every wait is reported to `on_wait` before it starts, so the caller can journal it. The waits
happen in `increment` (with an injectable sleep and clock), not in urllib3's `sleep`, which is
a no-op here: that way tests that fake the transport (`responses` never calls `sleep`) see the
same waits as a real connection.
"""

from __future__ import annotations

import email.utils
import json
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from github.Requester import Requester
from urllib3 import BaseHTTPResponse, Retry
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError

from holon.github.errors import RateLimited

IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})
RATE_LIMIT_STATUSES = frozenset({403, 429})
SECONDARY_WAIT = 60.0  # GitHub: without a header, "wait for at least one minute"


@dataclass(frozen=True)
class Wait:
    """A wait before a request is sent again; `path` has no query string."""

    seconds: float
    reason: str
    method: str
    path: str


OnWait = Callable[[Wait], None]


def _ignore(wait: Wait) -> None:
    del wait


class HolonRetry(Retry):
    def __init__(
        self,
        *,
        max_wait: float = 90.0,
        backoff: float = 1.0,
        on_wait: OnWait = _ignore,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        **kwargs: Any,
    ) -> None:
        self.max_wait = max_wait
        self.backoff = backoff
        self.on_wait = on_wait
        self.sleep_for = sleep
        self.clock = clock
        kwargs.setdefault("total", 3)
        kwargs["allowed_methods"] = IDEMPOTENT
        # The last answer goes back to PyGithub, which raises for its status: no RetryError.
        kwargs["raise_on_status"] = False
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> Self:
        kw.update(
            max_wait=self.max_wait,
            backoff=self.backoff,
            on_wait=self.on_wait,
            sleep=self.sleep_for,
            clock=self.clock,
        )
        return super().new(**kw)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if status_code in RATE_LIMIT_STATUSES:
            return True  # `increment` tells a rate limit from a refusal
        return status_code >= 500 and self._is_method_retryable(method)

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        """Nothing: `increment` has waited already."""

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        verb = (method or "").upper()
        path = urllib.parse.urlsplit(url or "").path
        if response is None or response.status not in RATE_LIMIT_STATUSES:
            # Sent and unanswered (a read timeout, a dropped connection) and not idempotent:
            # GitHub may have done it, so never again.
            unanswered = error is not None and not self._is_connection_error(error)
            if error is not None and unanswered and not self._is_method_retryable(verb):
                raise error
            new = super().increment(method, url, response, error, _pool, _stacktrace)
            retry_after = self._retry_after(response) if response is not None else None
            if retry_after is not None and retry_after > self.max_wait:
                raise MaxRetryError(_pool, url or "")  # type: ignore[arg-type]  # answer to PyGithub
            wait = (
                retry_after
                if retry_after is not None
                else self.backoff * 2 ** (len(new.history) - 1)
            )
            reason = (
                f"server error {response.status}"
                if response
                else ("no answer" if unanswered else "connection error")
            )
            self._wait(Wait(wait, reason, verb, path))
            return new
        wait, reason, read = self._rate_limit_wait(response)
        if wait > self.max_wait:
            _drain(response)
            raise RateLimited(
                f"GitHub's {reason} on {verb} {path} asks for {wait:.0f}s, longer than the "
                f"{self.max_wait:.0f}s Holon waits (HOLON_GITHUB_MAX_WAIT)",
                wait=wait,
            )
        try:
            new = super().increment(method, url, response, error, _pool, _stacktrace)
        except MaxRetryError:
            if read is None:
                raise  # the untouched answer goes back to PyGithub, which raises for it
            raise Requester.createException(response.status, dict(response.headers), read) from None
        self._wait(Wait(wait, reason, verb, path))
        return new

    def _wait(self, wait: Wait) -> None:
        seconds = max(wait.seconds, 0.0)
        self.on_wait(Wait(seconds, wait.reason, wait.method, wait.path))
        if seconds:
            self.sleep_for(seconds)

    def _retry_after(self, response: BaseHTTPResponse) -> float | None:
        value = response.headers.get("Retry-After")
        if value is None:
            return None
        value = value.strip()
        if value.isdigit():
            return float(value)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None  # not a header GitHub sends; fall back to the other signals
        return max(when.timestamp() - self.clock(), 0.0)

    def _rate_limit_wait(self, response: BaseHTTPResponse) -> tuple[float, str, Any]:
        """How long GitHub asks to wait, which limit, and the body if it had to be read;
        raises PyGithub's exception for a 403 or 429 that is not a rate limit (a refusal is
        not retried)."""
        retry_after = self._retry_after(response)
        if retry_after is not None:
            return retry_after, "secondary rate limit", None
        headers = response.headers
        reset = headers.get("x-ratelimit-reset", "")
        if headers.get("x-ratelimit-remaining") == "0":
            if reset.isdigit():
                # One second more: GitHub does not say when within that second the reset is.
                return max(int(reset) - self.clock(), 0.0) + 1, "primary rate limit", None
            return SECONDARY_WAIT, "primary rate limit", None
        # No header says it: GitHub's message does. Reading the body consumes it, so from here
        # on PyGithub's exception is raised here, as PyGithub's own retry does, rather than
        # the answer passed on empty.
        data = _body(response)
        message = data.get("message") if isinstance(data, dict) else None
        if isinstance(message, str) and Requester.isRateLimitError(message):
            return SECONDARY_WAIT, "secondary rate limit", data
        raise Requester.createException(response.status, dict(response.headers), data)


def _body(response: BaseHTTPResponse) -> Any:
    raw = response.data or b""
    try:
        return json.loads(raw)
    except ValueError:
        return {"data": raw.decode("utf-8", errors="replace")}


def _drain(response: BaseHTTPResponse) -> None:
    """Read what is left so the connection goes back to the pool before we raise."""
    response.drain_conn()
