"""Durations as Holon writes them everywhere: `90s`, `5m`, `1h30m`, `250ms` or bare seconds."""

from __future__ import annotations

import re

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration(value: str | int | float, *, allow_zero: bool = False) -> float:
    """Return seconds for a duration; raise ValueError naming the problem.

    Limits (timeouts, intervals) must be positive; measured durations may be zero.
    """
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or a string like 90s, 5m, 1h30m")
    if isinstance(value, int | float):
        seconds = float(value)
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
                    f"invalid duration {value!r}: use 90s, 5m, 1h30m, 250ms or bare seconds"
                )
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise ValueError(f"invalid duration {value!r}: must be greater than zero")
    return seconds


def format_duration(seconds: float) -> str:
    """Compact form used in records and messages: `12.5s`."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
