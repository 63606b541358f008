"""Turning pydantic validation errors into one line that never echoes the input value."""

from __future__ import annotations

from pydantic import ValidationError


def describe_validation_error(source: str, error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_input=False, include_url=False):
        loc = ".".join(str(p) for p in item["loc"])
        message = item["msg"]
        # pydantic prefixes messages of ValueErrors raised by validators; ours are complete.
        message = message.removeprefix("Value error, ")
        parts.append(f"{loc}: {message}" if loc else message)
    shown = "; ".join(parts[:3])
    more = f" (and {len(parts) - 3} more)" if len(parts) > 3 else ""
    return f"{source}: {shown}{more}"
