"""Turning pydantic validation errors into one line that never echoes the input value; the
default factories of the models built before a run's agent starts."""

from __future__ import annotations

from typing import Any

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


# Default factories for the fields of the models `holon run` builds before its agent starts
# (the spec's, the request's, a skill's). pydantic asks for the signature of a default factory
# when it builds a model; for a builtin (`list`, `dict`) that means parsing its text signature,
# whose first parse compiles the tokenizer's patterns: about 3 ms of the run's start.
def empty_list() -> list[Any]:
    return []


def empty_dict() -> dict[Any, Any]:
    return {}
