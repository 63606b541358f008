"""Control commands for a running serve: encoding, parsing and inbox file names. No I/O.

`holon serve pause` and friends never touch state.json (the running serve owns it); they drop a
command file into the inbox, and the serve loop takes the commands at its next pass (store.py).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from holon import jsonio
from holon.errors import InvalidInput

_last_ns = 0


def encode_control(command: Mapping[str, Any]) -> str:
    """The file text of a command; InvalidInput if it has no command name or is not JSON."""
    if not isinstance(command.get("command"), str) or not command["command"]:
        raise InvalidInput("a control command needs a non-empty string 'command'")
    try:
        text = json.dumps(dict(command), sort_keys=True, ensure_ascii=False, allow_nan=False)
        text = jsonio.scrub(text)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"control command is not JSON-serializable: {exc}") from exc
    return text + "\n"


def parse_control(raw: bytes) -> dict[str, Any] | None:
    """The command in a control file, or None if the file is malformed."""
    try:
        value = jsonio.loads(raw, "control command")
    except InvalidInput:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return None
    return value if value["command"] else None


def control_name() -> str:
    """A fresh inbox file name; names sort in posting order.

    UTC time to the nanosecond, forced strictly increasing within the process because some clocks
    tick coarser than two quick posts; a random suffix keeps posters in other processes apart.
    """
    global _last_ns
    ns = max(time.time_ns(), _last_ns + 1)
    _last_ns = ns
    seconds, fraction = divmod(ns, 1_000_000_000)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds))
    return f"{stamp}.{fraction:09d}Z-{uuid.uuid4().hex}.json"


def is_control_name(name: str) -> bool:
    # Dot-files are atomic writes still in progress.
    return name.endswith(".json") and not name.startswith(".")
