"""Decoding payload bytes at the edge: size, encoding and shape checked before anything else."""

from __future__ import annotations

import json
from typing import Any

from holon.errors import InvalidInput

# GitHub caps webhook payloads at 25 MB; anything larger did not come from GitHub.
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024


def decode_payload(raw: bytes, source: str = "payload") -> dict[str, Any]:
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"{source}: {len(raw)} bytes is over the 25 MiB limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{source}: not valid UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}"
        ) from None
    except RecursionError:  # nesting deeper than Python's stack: hostile, not a bug
        raise InvalidInput(f"{source}: invalid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: expected a JSON object")
    return data
