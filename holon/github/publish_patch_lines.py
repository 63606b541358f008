"""The line-level readers of git's patch format for `publish_patch`: quoted names, the names
of a `diff --git` line, hunks counted against their header, binary blocks checked line by line.
Each raises `PublishError("unreadable")` naming the line it could not read."""

from __future__ import annotations

import re

from holon.github.errors import PublishError

_HUNK = re.compile(rb"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_BINARY_BLOCK = re.compile(rb"(?:literal|delta) \d+")
_BASE85 = re.compile(rb"[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+")
_ESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b"\\": 92, b'"': 34}


def fail(number: int, what: str) -> PublishError:
    message = f"diff.patch is not a git patch Holon can read: line {number}: {what}"
    return PublishError("unreadable", message, (f"line {number}: {what}",))


def _unquote(text: bytes, number: int) -> tuple[bytes, int]:
    """A C-quoted name at the start of `text` and where it ends, as git quotes names."""
    out, i = bytearray(), 1
    while i < len(text):
        char = text[i : i + 1]
        if char == b'"':
            return bytes(out), i + 1
        if char == b"\\":
            nxt = text[i + 1 : i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            octal = text[i + 1 : i + 4]
            if len(octal) == 3 and all(48 <= c <= 55 for c in octal):
                out.append(int(octal, 8) & 0xFF)
                i += 4
                continue
            raise fail(number, "a bad escape in a quoted name")
        out += char
        i += 1
    raise fail(number, "an unterminated quoted name")


def _strip(raw: bytes, number: int) -> str:
    """A name as a path: its first component (`a/`, `b/`) removed, as `git apply -p1` does."""
    if b"/" not in raw:
        raise fail(number, "a name without its a/ or b/ prefix")
    return raw.split(b"/", 1)[1].decode("utf-8", "surrogateescape")


def plain(raw: bytes, number: int) -> bytes:
    """A name as written: C-quoted or as it stands."""
    if not raw.startswith(b'"'):
        return raw
    name, end = _unquote(raw, number)
    if end != len(raw):
        raise fail(number, "text after a quoted name")
    return name


def header_names(rest: bytes, number: int) -> tuple[str, str] | None:
    """The two names of `diff --git A B`; None when unquoted names differ (a rename: the
    `rename from/to` lines name it)."""
    if rest.startswith(b'"'):
        first, end = _unquote(rest, number)
        if rest[end : end + 1] != b" ":
            raise fail(number, "a malformed diff --git line")
        return _strip(first, number), _strip(plain(rest[end + 1 :], number), number)
    if rest.endswith(b'"'):
        split = rest.find(b' "')
        if split < 0:
            raise fail(number, "a malformed diff --git line")
        return _strip(rest[:split], number), _strip(plain(rest[split + 1 :], number), number)
    for at in [i for i, c in enumerate(rest) if c == 32]:
        a, b = rest[:at], rest[at + 1 :]
        if b"/" in a and b"/" in b and a.split(b"/", 1)[1] == b.split(b"/", 1)[1]:
            return _strip(a, number), _strip(b, number)
    return None


def side(raw: bytes, number: int) -> str | None:
    """The name of a `---` or `+++` line; None for /dev/null. Git ends a name holding a space
    with a tab there (for GNU patch), which is not part of it."""
    raw = raw.removesuffix(b"\t")
    return None if raw == b"/dev/null" else _strip(plain(raw, number), number)


def hunk(lines: list[bytes], i: int) -> int:
    """The line after the hunk at `i`, whose lines are counted against its header."""
    found = _HUNK.match(lines[i])
    if found is None:
        raise fail(i + 1, "a malformed hunk header")
    old = int(found[1]) if found[1] is not None else 1
    new = int(found[2]) if found[2] is not None else 1
    i += 1
    while old > 0 or new > 0:
        if i >= len(lines):
            raise fail(i, "a hunk shorter than its header says")
        kind = lines[i][:1]
        if kind in (b" ", b""):  # git reads an empty line as empty context
            old, new = old - 1, new - 1
        elif kind == b"-":
            old -= 1
        elif kind == b"+":
            new -= 1
        elif kind != b"\\":
            raise fail(i + 1, "a line that belongs to no hunk")
        if old < 0 or new < 0:
            raise fail(i + 1, "a hunk longer than its header says")
        i += 1
    if i < len(lines) and lines[i].startswith(b"\\"):
        i += 1  # `\ No newline at end of file` after the last line
    return i


def binary(lines: list[bytes], i: int) -> int:
    """The line after a binary patch's forward block and optional reverse block."""
    for block in range(2):
        if i >= len(lines) or not _BINARY_BLOCK.fullmatch(lines[i]):
            if block:
                return i
            raise fail(i + 1, "a malformed binary patch")
        i += 1
        while i < len(lines) and lines[i]:
            if not _BASE85.fullmatch(lines[i]):
                raise fail(i + 1, "malformed binary data")
            i += 1
        i += 1
    return i
