"""Sizes as Holon accepts them on the command line: `512m`, `2g`, `1.5g`, `64k` or bare bytes."""

from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([bkmg]?)", re.IGNORECASE)


def parse_size(value: str) -> int:
    """Return bytes for a size; raise ValueError naming the problem."""
    match = _SIZE.fullmatch(value.strip())
    if match is None:
        raise ValueError(f"invalid size {value!r}: use a number with b, k, m or g, e.g. 512m, 2g")
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ValueError(f"invalid size {value!r}: must be greater than zero")
    return size
