"""The one HTTP layer the model providers share: a JSON POST with timeouts, retries and
secret-free errors.

Retries: 429, 500, 502, 503, 504, 529 (Anthropic's "overloaded") and dropped connections or
timeouts are tried again with exponential backoff and jitter, honouring `retry-after-ms` and
`Retry-After` (seconds or an HTTP date), each wait capped and all waits together capped. Any
other answer is final. Sleep, clocks and randomness are injectable so tests run instantly and
can assert the waits. The timeouts and the retry budget come from the environment
(`env.http_policy`); a timeout's error line names which timeout it was and how long.

Secrets: the caller names the values that must never appear (the API key); every error line
and log record is redacted of them and of anything secret-looking, and never carries request
headers. Redirects are not followed: a redirected POST would carry the key to another host.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3.exceptions

from holon.agent.providers.base import ProviderError
from holon.secrets import Redactor, mask_secret_looking

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
ERROR_TEXT_LIMIT = 300


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # requests in all, the first included
    base_delay: float = 1.0  # the first backoff, doubled each retry
    max_delay: float = 30.0  # one wait, also when the server asks for longer
    max_total_wait: float = 120.0  # from the first request until a retry would start
    connect_timeout: float = 10.0
    read_timeout: float = 600.0  # a long non-streaming answer takes minutes


def _no_netrc(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """A session-wide auth that changes nothing: with one set, requests never reads ~/.netrc,
    so no credential reaches a provider from a file."""
    return request


def new_session() -> requests.Session:
    session = requests.Session()
    session.auth = _no_netrc
    return session


def origin(url: str) -> str:
    """scheme://host[:port] of `url`: what errors name (never a path, query or user info)."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def one_line(text: str, limit: int = ERROR_TEXT_LIMIT) -> str:
    """`text` on one line with control characters spaced out, cut to `limit` characters."""
    flat = "".join(c if c.isprintable() else " " for c in text)
    flat = " ".join(flat.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def error_detail(body: bytes) -> str:
    """What a provider's error body says, as `type: message`, from the envelopes in use:
    Anthropic's `{"type":"error","error":{"type","message"}}`, OpenAI's `{"error":{"message",
    "type","code"}}`, a local server's `{"error":"..."}` or `{"message":...}`; else the text."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")
    if not isinstance(data, dict):
        return body.decode("utf-8", "replace")
    error = data.get("error")
    if isinstance(error, str):
        return error
    source = error if isinstance(error, dict) else data
    kind = source.get("type")
    code = source.get("code")
    message = source.get("message")
    label = " ".join(str(v) for v in (kind, code) if isinstance(v, str | int) and v != "")
    text = message if isinstance(message, str) else ""
    if label and text:
        return f"{label}: {text}"
    return label or text or body.decode("utf-8", "replace")


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms` first (OpenAI's, more precise),
    then `Retry-After` as seconds or an HTTP date (relative to `now`, a time.time() value)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000
        except ValueError:
            value = -1
        if value >= 0 and value == value:  # not negative, not NaN
            return value
    header = headers.get("retry-after")
    if header is None:
        return None
    header = header.strip()
    try:
        seconds = float(header)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT
            return None
        return max(0.0, when.timestamp() - now)
    return seconds if seconds >= 0 and seconds == seconds else None


class JsonHttp:
    """POSTs JSON to one provider and returns the decoded JSON answer, or raises ProviderError
    with one secret-free line."""

    def __init__(
        self,
        provider: str,
        *,
        secrets: Iterable[str] = (),
        policy: RetryPolicy | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.provider = provider
        self.policy = policy or RetryPolicy()
        self._redact = Redactor(secrets)
        self._session = session or new_session()
        self._sleep = sleep
        self._clock = clock
        self._now = now
        self._jitter = jitter

    def __repr__(self) -> str:
        return f"JsonHttp({self.provider!r})"

    def protect(self, secret: str) -> None:
        """Keep `secret` out of every error line and log record from now on."""
        self._redact.add(secret)

    def clean(self, text: str) -> str:
        """`text` as one bounded line without the secrets or anything secret-looking."""
        return one_line(mask_secret_looking(self._redact(text)))

    def error(
        self, message: str, *, retryable: bool = False, status: int | None = None
    ) -> ProviderError:
        return ProviderError(
            self.clean(f"{self.provider}: {message}"), retryable=retryable, status=status
        )

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter: half the doubled delay fixed, half random, so
        clients that failed together do not retry together."""
        delay = min(self.policy.max_delay, self.policy.base_delay * 2.0 ** (attempt - 1))
        return delay / 2 + delay / 2 * self._jitter()

    def post(self, url: str, headers: Mapping[str, str], body: Mapping[str, Any]) -> Any:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        request_headers = {
            "content-type": "application/json",
            "accept": "application/json",
            **headers,
        }
        start = self._clock()
        attempt = 0
        while True:
            attempt += 1
            outcome = self._attempt(url, request_headers, data)
            if isinstance(outcome, _Answer):
                return self._decode(outcome)
            wait = self._backoff(attempt) if outcome.asked is None else outcome.asked
            wait = min(wait, self.policy.max_delay)
            spent = self._clock() - start
            if attempt >= self.policy.attempts or spent + wait > self.policy.max_total_wait:
                tries = f"{attempt} attempt{'s' if attempt > 1 else ''}"
                raise self.error(
                    f"{outcome.problem} (gave up after {tries} in {spent:.0f}s)",
                    retryable=True,
                    status=outcome.status,
                )
            log.warning(
                "%s",
                self.clean(
                    f"{self.provider}: {outcome.problem}; retrying in {wait:.1f}s "
                    f"(attempt {attempt + 1} of {self.policy.attempts})"
                ),
            )
            self._sleep(wait)

    def _attempt(self, url: str, headers: Mapping[str, str], data: bytes) -> _Answer | _Retry:
        """One request: the final answer, or why it may be tried again."""
        timeout = (self.policy.connect_timeout, self.policy.read_timeout)
        try:
            response = self._session.post(
                url,
                data=data,
                headers=dict(headers),
                timeout=timeout,
                allow_redirects=False,
                stream=True,
            )
        except requests.ConnectTimeout:
            return _Retry(
                f"could not connect to {origin(url)} within the connect timeout of "
                f"{_seconds(self.policy.connect_timeout)}"
            )
        except requests.Timeout:
            return _Retry(
                f"no answer from {origin(url)} within the read timeout of "
                f"{_seconds(self.policy.read_timeout)}"
            )
        except requests.ConnectionError:
            return _Retry(f"could not connect to {origin(url)}")
        except requests.RequestException as exc:
            # Never str(exc): requests puts header values (the key) into some of its messages.
            raise self.error(f"request to {origin(url)} failed ({type(exc).__name__})") from None
        with response:
            status = response.status_code
            if status in RETRY_STATUSES:
                asked = parse_retry_after(response.headers, self._now())
                return _Retry(f"HTTP {status} {self._read_error(response)}", status, asked)
            if not 200 <= status < 300:
                raise self.error(f"HTTP {status} {self._read_error(response)}", status=status)
            body = self._read(response, url)
            if isinstance(body, _Retry):
                return body
            return _Answer(status, body)

    def _read(self, response: requests.Response, url: str) -> bytes | _Retry:
        """The whole body, bounded; why not when the connection broke off or stalled (no byte
        within the read timeout) while reading it."""
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_content(64 * 1024):
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise self.error(
                        f"answer from {origin(url)} is larger than {MAX_RESPONSE_BYTES} bytes",
                        status=response.status_code,
                    )
                chunks.append(chunk)
        except requests.RequestException as exc:
            if _stalled(exc):
                return _Retry(
                    f"answer from {origin(url)} stalled: no data within the read timeout of "
                    f"{_seconds(self.policy.read_timeout)}",
                    response.status_code,
                )
            return _Retry(f"answer from {origin(url)} broke off", response.status_code)
        return b"".join(chunks)

    def _read_error(self, response: requests.Response) -> str:
        raw = b""
        try:
            for chunk in response.iter_content(8 * 1024):
                raw += chunk
                if len(raw) >= 64 * 1024:
                    break
        except requests.RequestException:
            return "(the error body broke off)"
        return error_detail(raw) if raw.strip() else (response.reason or "").strip()

    def _decode(self, answer: _Answer) -> Any:
        try:
            return json.loads(answer.body)
        except (ValueError, RecursionError):
            raise self.error(
                f"answer was not JSON (HTTP {answer.status}, {len(answer.body)} bytes)",
                status=answer.status,
            ) from None


def _seconds(value: float) -> str:
    return f"{value:g}s"


def _stalled(exc: requests.RequestException) -> bool:
    """A read of the body that timed out: requests wraps urllib3's ReadTimeoutError in a
    ConnectionError there (and raises a Timeout before the headers)."""
    if isinstance(exc, requests.Timeout):
        return True
    cause = exc.args[0] if exc.args else None
    return isinstance(cause, urllib3.exceptions.ReadTimeoutError)


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes


@dataclass(frozen=True)
class _Retry:
    problem: str
    status: int | None = None
    asked: float | None = None  # the wait the server asked for, in seconds
