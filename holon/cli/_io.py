"""Reading the JSON documents commands take as files ('-' for standard input)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from holon.errors import InvalidInput


def read_bytes(path: str) -> bytes:
    if path == "-":
        if sys.stdin is None:  # started with standard input closed (`<&-`)
            raise InvalidInput("-: standard input is closed")
        try:
            return sys.stdin.buffer.read()
        except OSError as exc:
            raise InvalidInput(f"cannot read standard input: {exc.strerror}") from None
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InvalidInput(f"file not found: {path}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None


def read_json(path: str) -> Any:
    try:
        return json.loads(read_bytes(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: malformed JSON ({exc})") from None
    except RecursionError:  # nesting deeper than Python's stack: hostile, not a bug
        raise InvalidInput(f"{path}: malformed JSON (nested too deeply)") from None


def print_json(data: str) -> None:
    sys.stdout.write(data if data.endswith("\n") else data + "\n")
