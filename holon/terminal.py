"""Untrusted text on a terminal: an agent's question, a closure's detail, a pause reason, a path.

A terminal acts on what it is sent: ESC starts a control sequence (colour, clearing the screen,
OSC 52 writing the clipboard, a window title), CR and LF start a line that can pose as one of
Holon's own (`  - issue:2: completed`), NUL and bidi or zero-width characters hide or reorder
text. Every piece of outside text Holon prints for a person goes through `line`: one line, every
character Python does not call printable shown as an escape (`\\x1b`, `\\u202e`), so it is seen
and never acted on. `json_text` does the same inside JSON printed to a terminal (`--json`), where
encoders leave DEL, C1 controls and invisible characters raw.
"""

from __future__ import annotations

import re

# Candidates only: everything outside printable ASCII; each is then asked str.isprintable().
_NOT_PLAIN_ASCII = re.compile("[^\x20-\x7e]")
_NOT_PLAIN_ASCII_OR_NEWLINE = re.compile("[^\x20-\x7e\n]")


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return char if char.isprintable() else _escape(char)


def line(text: str, limit: int | None = None) -> str:
    """`text` as one terminal line: each run of whitespace (newlines, CR, tabs included) one
    space, every other character that is not printable escaped; cut to `limit` characters."""
    flat = " ".join(text.split())
    if not flat.isascii() or not flat.isprintable():
        flat = _NOT_PLAIN_ASCII.sub(_visible, flat)
    if limit is not None and len(flat) > limit:
        flat = flat[: max(limit - 3, 0)] + "..."
    return flat


def own_line(text: str) -> str:
    """A line Holon composed around outside text: its leading indentation (Holon's own list
    layout) kept, the rest made one line as `line` does."""
    body = text.lstrip(" ")
    return text[: len(text) - len(body)] + line(body)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters past the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(data: str) -> str:
    """JSON text (from json.dumps or pydantic) with every character that is not printable inside
    its strings written as a `\\u` escape: the same JSON value, nothing a terminal acts on.
    Outside strings JSON text is printable ASCII, spaces and newlines, which are kept."""
    if data.isascii() and "\x7f" not in data:
        return data  # encoders already escape C0 controls; nothing else can be there
    return _NOT_PLAIN_ASCII_OR_NEWLINE.sub(_json_escape, data)
