"""Decoding payload bytes at the edge: size, encoding and shape checked before anything else."""

from __future__ import annotations

from typing import Any

from holon import jsonio
from holon.errors import InvalidInput

# GitHub caps webhook payloads at 25 MB; anything larger did not come from GitHub.
MAX_PAYLOAD_BYTES = 25 * 1024 * 1024


def decode_payload(raw: bytes, source: str = "payload") -> dict[str, Any]:
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"{source}: {len(raw)} bytes is over the 25 MiB limit")
    return jsonio.load_object(raw, source)
