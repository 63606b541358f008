"""The providers' HTTP settings as the environment gives them: the connect and read timeouts, the
retries and the retry deadline (`HOLON_MODEL_*`). Pure and light (no HTTP client imported), so
`holon action` checks them before any run, as the agent does before its first request.

Durations are Holon's (`90s`, `5m`, `250ms`, bare seconds: `holon.duration`); an empty value is
an unset one. A bad value is a ValueError of one line naming its variable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from holon.duration import parse_duration
from holon.secrets import mask_secret_looking

CONNECT_TIMEOUT = "HOLON_MODEL_CONNECT_TIMEOUT"
READ_TIMEOUT = "HOLON_MODEL_READ_TIMEOUT"
RETRIES = "HOLON_MODEL_RETRIES"
RETRY_DEADLINE = "HOLON_MODEL_RETRY_DEADLINE"
MAX_RETRIES = 10
# The longest timeout or deadline taken: a day (`600h` for `600s` is refused).
MAX_SECONDS = 86400.0


def _timeout(text: str) -> float:
    return parse_duration(text, maximum=MAX_SECONDS)


def _deadline(text: str) -> float:
    return parse_duration(text, allow_zero=True, maximum=MAX_SECONDS)


def _attempts(text: str) -> float:
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_RETRIES:
        raise ValueError(f"must be a whole number from 0 to {MAX_RETRIES}, not {text[:40]!r}")
    return int(text) + 1  # the policy counts requests, the first included


# variable -> (the field of `holon.agent.providers.http.RetryPolicy`, its parser)
SETTINGS: dict[str, tuple[str, Callable[[str], float]]] = {
    CONNECT_TIMEOUT: ("connect_timeout", _timeout),
    READ_TIMEOUT: ("read_timeout", _timeout),
    RETRIES: ("attempts", _attempts),
    RETRY_DEADLINE: ("max_total_wait", _deadline),
}
VARIABLES = tuple(SETTINGS)


def http_settings(env: Mapping[str, str]) -> dict[str, float]:
    """RetryPolicy field -> value for each setting `env` holds; ValueError naming the variable."""
    values: dict[str, float] = {}
    for variable, (field, parse) in SETTINGS.items():
        text = env.get(variable, "").strip()
        if not text:
            continue
        try:
            values[field] = parse(text)
        except ValueError as exc:
            raise ValueError(f"{variable}: {mask_secret_looking(str(exc))}") from None
    return values
