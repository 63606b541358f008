"""Workflow commands and file-command records, escaped as the Actions toolkit escapes them (pure).

Untrusted text reaches these (an issue title in a notice, a model's summary in an output), so
nothing is written raw: a workflow command's data and properties are percent-escaped, so a value
can never end the line or start another command; a multi-line output value goes between
delimiters chosen at random per record (`ghadelimiter_<uuid>`), and a value or name that
contains its delimiter is refused rather than written.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping

# Names of outputs and of command properties: what Actions accepts without ambiguity.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,99}")
_COMMAND = re.compile(r"[a-z][a-z-]{0,31}")


class CommandError(ValueError):
    """A record that cannot be written safely; the message names what, never the value."""


def escape_data(text: str) -> str:
    """A command's message: `%`, CR and LF escaped (the toolkit's `escapeData`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command property's value: also `:` and `,` (the toolkit's `escapeProperty`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, properties: Mapping[str, str] | None = None) -> str:
    """`::name key=value,...::message`, one line whatever the inputs hold."""
    if not _COMMAND.fullmatch(name):
        raise CommandError(f"not a workflow command name: {name[:40]!r}")
    props = ""
    if properties:
        for key in properties:
            if not _NAME.fullmatch(key):
                raise CommandError(f"not a command property name: {key[:40]!r}")
        props = " " + ",".join(f"{k}={escape_property(v)}" for k, v in properties.items())
    return f"::{name}{props}::{escape_data(message)}"


def mask(secret: str) -> list[str]:
    """`::add-mask::` lines for a secret: one per line of it, since Actions masks line by line."""
    return [command("add-mask", line) for line in secret.splitlines() if line.strip()]


def new_delimiter() -> str:
    return f"ghadelimiter_{uuid.uuid4()}"


def key_value(name: str, value: str, delimiter: Callable[[], str] = new_delimiter) -> str:
    """One `GITHUB_OUTPUT` (or `GITHUB_ENV`) record: `name<<D`, the value, `D`."""
    if not _NAME.fullmatch(name):
        raise CommandError(f"not an output name: {name[:40]!r}")
    mark = delimiter()
    if mark in value:
        raise CommandError(f"the value of {name} contains its delimiter: not written")
    return f"{name}<<{mark}\n{value}\n{mark}\n"


__all__ = [
    "CommandError",
    "command",
    "escape_data",
    "escape_property",
    "key_value",
    "mask",
    "new_delimiter",
]
