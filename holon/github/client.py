"""The GitHub client Holon uses: configuration from the environment, PyGithub built with
Holon's retry policy, lazy objects and write spacing (docs/github.md).

Configuration is read from an environment mapping the caller passes (never `os.environ` here):

- `GITHUB_API_URL`: the REST API root, `https://api.github.com` by default; on GitHub
  Enterprise Server `https://HOST/api/v3` (Actions sets it). Plain http only to a loopback
  address (a test's fake), so the token never crosses a network in clear.
- `GITHUB_TOKEN`: the token, held as a `SecretStr`: never in a repr, a str, a dump or a message.
- `HOLON_GITHUB_LOGIN`: the login Holon writes as (whose markers count as Holon's own). `GET
  /user` is not open to the Actions token, so this is configuration. Without it, inside Actions
  (`GITHUB_ACTIONS=true`) with a token of the kind Actions issues (`ghs_`), it is
  `github-actions[bot]`; otherwise unknown (None), and no marker counts as Holon's own. A
  GitHub App's token also starts `ghs_` but writes as `<app>[bot]`: set the login for it.
- `HOLON_GITHUB_WRITE_SPACING` (default 1s, GitHub's advice between writes), `HOLON_GITHUB_TIMEOUT`
  (default 30s per request), `HOLON_GITHUB_MAX_WAIT` (default 90s: the longest rate-limit wait
  before `RateLimited`), `HOLON_GITHUB_RETRIES` (default 3), `HOLON_GITHUB_BACKOFF` (default 1s:
  the first wait before a failed read is sent again, doubled each time): durations as `90s`,
  `2m` or seconds.
"""

from __future__ import annotations

import ipaddress
import math
import re
import time
import urllib.parse
from collections.abc import Callable, Mapping

import github
from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, field_validator

import holon
from holon.duration import parse_duration
from holon.errors import InvalidInput
from holon.github.retry import HolonRetry, OnWait, Wait
from holon.github.transport import use_transport

DEFAULT_API_URL = "https://api.github.com"
ACTIONS_LOGIN = "github-actions[bot]"
# A GitHub login (letters, digits, single hyphens, at most 39), `[bot]` for an app.
_LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}(?:\[bot\])?")


class GitHubConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    api_url: str = DEFAULT_API_URL
    token: SecretStr | None = None
    login: str | None = None
    write_spacing: float = 1.0
    timeout: float = 30.0
    max_wait: float = 90.0
    retries: int = 3
    backoff: float = 1.0

    @field_validator("api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        parts = urllib.parse.urlsplit(value.strip())
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValueError("must be an http(s) URL such as https://HOST/api/v3")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("must be a plain URL: no user, password, query or fragment")
        if parts.scheme == "http" and not _loopback(parts.hostname):
            raise ValueError("must be https (http only to a loopback address)")
        return value.strip().rstrip("/")

    @field_validator("login")
    @classmethod
    def _login(cls, value: str | None) -> str | None:
        if value is not None and not _LOGIN.fullmatch(value):
            raise ValueError("must be a GitHub login such as octocat or my-app[bot]")
        return value

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHubConfig:
        """The configuration in `env`; `InvalidInput` naming the variable when one is bad."""
        token = env.get("GITHUB_TOKEN") or None
        login = env.get("HOLON_GITHUB_LOGIN") or None
        if login is None and env.get("GITHUB_ACTIONS") == "true" and (token or "")[:4] == "ghs_":
            login = ACTIONS_LOGIN
        values: dict[str, object] = {"token": token, "login": login}
        for name, field in _VARIABLES.items():
            text = env.get(name)
            if not text or field in values:
                continue
            try:
                values[field] = _PARSERS.get(field, str)(text)
            except ValueError as exc:
                raise InvalidInput(f"{name}: {exc}") from None
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            item = exc.errors(include_input=False, include_url=False)[0]
            name = _FIELD_VARIABLE.get(str(item["loc"][0]), "GitHub configuration")
            raise InvalidInput(f"{name}: {item['msg'].removeprefix('Value error, ')}") from None


_VARIABLES = {
    "GITHUB_API_URL": "api_url",
    "HOLON_GITHUB_LOGIN": "login",
    "HOLON_GITHUB_WRITE_SPACING": "write_spacing",
    "HOLON_GITHUB_TIMEOUT": "timeout",
    "HOLON_GITHUB_MAX_WAIT": "max_wait",
    "HOLON_GITHUB_RETRIES": "retries",
    "HOLON_GITHUB_BACKOFF": "backoff",
}
_FIELD_VARIABLE = {field: name for name, field in _VARIABLES.items()}


def _count(text: str) -> int:
    if not text.strip().isdigit() or int(text) > 10:
        raise ValueError("must be a whole number from 0 to 10")
    return int(text)


_PARSERS: dict[str, Callable[[str], object]] = {
    "write_spacing": lambda text: parse_duration(text, allow_zero=True),
    "timeout": parse_duration,
    "max_wait": lambda text: parse_duration(text, allow_zero=True),
    "retries": _count,
    "backoff": lambda text: parse_duration(text, allow_zero=True),
}


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_client(
    config: GitHubConfig,
    *,
    on_wait: OnWait | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> github.Github:
    """A PyGithub client for `config`: lazy (an object costs no call until a value of it is
    read), writes spaced by `config.write_spacing`, reads unthrottled, every retry wait
    reported to `on_wait` (`sleep` and `clock` are for tests)."""
    retry = HolonRetry(
        total=config.retries,
        max_wait=config.max_wait,
        backoff=config.backoff,
        on_wait=on_wait or _nothing,
        sleep=sleep,
        clock=clock,
    )
    token = config.token.get_secret_value() if config.token else None
    client = github.Github(
        auth=github.Auth.Token(token) if token else None,
        base_url=config.api_url,
        timeout=max(1, math.ceil(config.timeout)),  # PyGithub takes whole seconds
        user_agent=f"holon/{holon.__version__}",
        retry=retry,
        seconds_between_requests=None,
        seconds_between_writes=config.write_spacing or None,
        lazy=True,
    )
    use_transport(client)  # the proxy and CA settings read once, not on every request
    return client


def _nothing(wait: Wait) -> None:
    del wait
