"""What a provider reads from the environment mapping it is given: its key, base URL, model and
HTTP policy (timeouts and retries).

Keys come only from that mapping (never from files or arguments), and no message here ever
holds a key's value: a bad one is described, not shown. A bad setting is one line naming its
variable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from urllib.parse import urlsplit

from holon.agent.providers.base import MissingCredentials, ProviderError
from holon.agent.providers.http import RetryPolicy
from holon.agent.providers.http_settings import http_settings
from holon.secrets import mask_secret_looking

MODEL_VARIABLE = "HOLON_MODEL"


def http_policy(env: Mapping[str, str]) -> RetryPolicy:
    """The timeouts and retries: RetryPolicy's defaults, each replaced by its HOLON_MODEL_*
    variable when set (`http_settings`); ProviderError naming the variable for a bad value."""
    try:
        values = http_settings(env)
    except ValueError as exc:
        raise ProviderError(str(exc)) from None
    default = RetryPolicy()
    return dataclasses.replace(
        default,
        attempts=int(values.get("attempts", default.attempts)),
        max_total_wait=values.get("max_total_wait", default.max_total_wait),
        connect_timeout=values.get("connect_timeout", default.connect_timeout),
        read_timeout=values.get("read_timeout", default.read_timeout),
    )


def api_key(env: Mapping[str, str], variable: str, *, required: bool = True) -> str | None:
    """The key in `variable`, surrounding whitespace dropped (a secret pasted with its newline
    still works); MissingCredentials naming the variable when it is unset or empty and
    required. A key with whitespace or control characters inside is refused, since it would
    break the request header (and requests would echo it in its error)."""
    value = env.get(variable, "").strip()
    if not value:
        if required:
            raise MissingCredentials(f"{variable} is not set")
        return None
    if any(c.isspace() or not c.isprintable() for c in value):
        raise MissingCredentials(f"{variable} holds whitespace or control characters")
    return value


def base_url(env: Mapping[str, str], variable: str, default: str) -> str:
    """The base URL in `variable` (else `default`), without a trailing slash; an http(s) URL
    with a host, or ProviderError naming the variable."""
    value = env.get(variable, "").strip() or default
    try:
        parts = urlsplit(value)
        scheme, host = parts.scheme, parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        scheme, host = "", None
    if scheme not in ("http", "https") or not host:
        shown = mask_secret_looking(value)[:200]
        raise ProviderError(f"{variable} is not an http(s) URL with a host: {shown!r}")
    return value.rstrip("/")


def model_name(env: Mapping[str, str], model: str | None, default: str) -> str:
    """The model: the argument (--model), else HOLON_MODEL, else the provider's default."""
    for candidate in (model, env.get(MODEL_VARIABLE)):
        if candidate is not None and candidate.strip():
            return candidate.strip()
    return default
