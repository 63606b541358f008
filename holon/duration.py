"""Durations as Holon writes them everywhere: `90s`, `5m`, `1h30m`, `250ms` or bare seconds."""

from __future__ import annotations

import math
import re

# The longest limit (timeout, interval, cooldown) Holon takes: a year. Far past any run or wait,
# and far inside what timers, sockets and date arithmetic can hold (`99999999999h` overflowed).
MAX_SECONDS = 365 * 86400.0
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration(
    value: str | int | float, *, allow_zero: bool = False, maximum: float | None = MAX_SECONDS
) -> float:
    """Return seconds for a duration; raise ValueError naming the problem.

    Limits (timeouts, intervals) must be positive and at most `maximum` (a year); measured
    durations may be zero and, with `maximum=None`, any finite length. NaN and infinity never
    are durations.
    """
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string like 90s, 5m, 1h30m")
    if isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:  # an integer past the largest float
            seconds = math.inf
    else:
        text = value.strip()
        if re.fullmatch(r"\d+(?:\.\d+)?", text):
            seconds = float(text)
        else:
            pos = 0
            seconds = 0.0
            for match in _PART.finditer(text):
                if match.start() != pos:
                    break
                seconds += float(match.group(1)) * _UNITS[match.group(2)]
                pos = match.end()
            if pos != len(text) or not text:
                raise ValueError(
                    f"invalid duration {_shown(value)}: use 90s, 5m, 1h30m, 250ms or bare seconds"
                )
    shown = _shown(value)
    if math.isnan(seconds) or (isinstance(value, float) and math.isinf(value)):
        raise ValueError(f"invalid duration {shown}: not a finite number")
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise ValueError(f"invalid duration {shown}: must be greater than zero")
    if maximum is not None and seconds > maximum:
        raise ValueError(f"invalid duration {shown}: at most {maximum / 86400:g}d")
    if math.isinf(seconds):
        raise ValueError(f"invalid duration {shown}: out of range")
    return seconds


def _shown(value: str | int | float) -> str:
    """The value as an error quotes it: a number of hundreds of digits is not printed whole."""
    if isinstance(value, int) and value.bit_length() > 64:
        return "(a number too large)"
    if isinstance(value, str) and len(value) > 40:
        value = value[:37] + "..."
    return repr(value)


def format_duration(seconds: float) -> str:
    """Compact form used in records and messages: `12.5s`."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
