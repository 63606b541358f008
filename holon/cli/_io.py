"""Reading the JSON documents commands take as files ('-' for standard input)."""

from __future__ import annotations

import sys
from typing import Any

from holon import jsonio
from holon.terminal import json_text

# Evidence, closure records and payloads: far below this; more is not a document Holon wrote.
MAX_DOCUMENT_BYTES = 25 * 1024 * 1024


def read_bytes(path: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of `path` ('-': standard input), refused once past `limit` while reading."""
    return jsonio.read_path(path, limit)


def read_json(path: str, limit: int = MAX_DOCUMENT_BYTES) -> Any:
    return jsonio.loads(read_bytes(path, limit), path)


def print_json(data: str) -> None:
    """JSON for a terminal or a pipe: invisible and control characters in its strings escaped
    (holon/terminal.py), the same JSON value."""
    data = json_text(data)
    sys.stdout.write(data if data.endswith("\n") else data + "\n")
