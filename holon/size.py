"""Sizes as Holon accepts them on the command line: `512m`, `2g`, `1.5g`, `64k` or bare bytes."""

from __future__ import annotations

import re

# Far past any memory or log limit, far inside what an int of the engine's API holds.
MAX_BYTES = 1024**5  # 1 PiB
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([bkmg]?)", re.IGNORECASE)


def parse_size(value: str) -> int:
    """Return bytes for a size; raise ValueError naming the problem."""
    match = _SIZE.fullmatch(value.strip())
    if match is None:
        raise ValueError(
            f"invalid size {value[:40]!r}: use a number with b, k, m or g, e.g. 512m, 2g"
        )
    size_float = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if size_float > MAX_BYTES:  # also a number of hundreds of digits (infinity as a float)
        raise ValueError(f"invalid size {value[:40]!r}: at most {MAX_BYTES // 1024**3}g")
    size = int(size_float)
    if size <= 0:
        raise ValueError(f"invalid size {value[:40]!r}: must be greater than zero")
    return size
