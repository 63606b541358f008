"""The one way Holon reads JSON it did not write itself: payloads, replay lines, evidence, closure
records, manifests, journals and state. Everything hostile ends in one InvalidInput line.

- Sizes are checked while reading (`read_stream`, `read_path`, `read_text`, `lines`): `/dev/zero`,
  gigabytes on standard input or a gigabyte replay line stop at the limit, never held whole in
  memory. `read_text` is the same bounded reader for the other files a command names (a spec, a
  policy, a prompt).
- Strict UTF-8; nesting past `MAX_DEPTH` is refused by a linear scan before parsing, so neither the
  parser nor anything that later walks the value (serializers, validators) can recurse too deep.
- Lone surrogate escapes (`"\\ud800"`) are refused: such a string cannot be written as UTF-8.
- Integers past Python's digit limit, NaN and Infinity (also as `1e999`) are refused.

`scrub` is the writing side: any text Holon writes goes out as valid UTF-8, whatever it holds.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections.abc import Iterator
from typing import IO, Any

from holon.errors import InvalidInput

MAX_DEPTH = 100  # GitHub payloads nest about 10 levels; Holon's own documents fewer
_CHUNK = 1024 * 1024

# For the bracket scan: strings (only brackets left in them by then) are cut out, so "[" in text
# is not nesting.
_STRING = re.compile(rb'"[^"]*"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_NOT_STRUCTURE_OR_ESCAPE = bytes(b for b in range(256) if b not in b'"[]{}\\')
_OPEN_CLOSE = bytes.maketrans(b"[]", b"{}")
# Any escape of a UTF-16 surrogate: rare, so only then are the parsed strings checked one by one.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _limit_text(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"


def read_stream(stream: IO[bytes], limit: int, source: str) -> bytes:
    """All of `stream`, refused as soon as it passes `limit` bytes (never read further)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            chunk = stream.read(min(_CHUNK, limit + 1 - size))
        except OSError as exc:
            raise InvalidInput(f"cannot read {source}: {exc.strerror or exc}") from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise InvalidInput(f"{source}: over the {_limit_text(limit)} limit")
        chunks.append(chunk)


def read_path(path: str, limit: int) -> bytes:
    """The bytes of a file named on the command line, or standard input for '-', bounded."""
    if path == "-":
        if sys.stdin is None:  # started with standard input closed (`<&-`)
            raise InvalidInput("-: standard input is closed")
        return read_stream(sys.stdin.buffer, limit, "standard input")
    handle, _ = open_path(path)
    with handle:
        return read_stream(handle, limit, path)


def open_path(path: str) -> tuple[IO[bytes], int]:
    """A file named on the command line, opened for reading, and its mode: a missing,
    unreadable or directory path is one InvalidInput line, never a traceback."""
    try:
        # O_NONBLOCK: a FIFO with no writer must not hang the open; reads below still block.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InvalidInput(f"file not found: {path}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):  # fdopen would raise IsADirectoryError, a traceback
        os.close(fd)
        raise InvalidInput(f"cannot read {path}: a directory, not a file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), mode


def read_text(path: str, limit: int, what: str) -> str:
    """The UTF-8 text of the `what` file (`spec`, `policy`, ...) at `path`, bounded like
    `read_path` (a FIFO or `/dev/zero` stops at `limit`); a directory, an unreadable file or
    bytes that are not UTF-8 are one InvalidInput line. Never standard input."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InvalidInput(f"{what} file not found: {path}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidInput(f"{what} path is a directory, not a file: {path}")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        raw = read_stream(handle, limit, f"{what} {path}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{what} {path}: not valid UTF-8 (byte {exc.start})") from None


def lines(stream: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """The lines of `stream` (newline kept); None for a line over `limit` bytes, whose rest is
    skipped chunk by chunk rather than read into memory."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if line.endswith(b"\n") or len(line) <= limit:
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(_CHUNK)
        yield None


def check_depth(raw: bytes, source: str, max_depth: int = MAX_DEPTH) -> None:
    """InvalidInput if arrays and objects in `raw` nest deeper than `max_depth`; no recursion.

    Escaped backslashes and quotes are dropped (pairing from the left, as JSON does), everything
    but quotes and brackets deleted, the strings cut out; the brackets left are reduced to `{`/`}`
    and innermost pairs are removed once per level: after `max_depth` rounds only deeper nesting
    is left. Every step is one pass in C over the bytes; cheap when shallow.
    """
    # One pass keeps the few bytes that matter; counting brackets there is then cheap, and
    # without a backslash in the document they already are its structure.
    structure = raw.translate(None, _NOT_STRUCTURE_OR_ESCAPE)
    if structure.count(b"{") + structure.count(b"[") <= max_depth:
        return
    if b"\\" in structure:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
        structure = raw.translate(None, _NOT_STRUCTURE)
    if structure.count(b'"') % 2 == 0:
        # Two adjacent quotes are an empty string, or the end of one string and the start of
        # the next with nothing between: dropping them leaves every other quote its role and
        # merges only string contents, so _STRING cuts out the same, in far fewer matches (the
        # strings left are those holding brackets, like GitHub's `{/ref}` URL templates).
        structure = structure.replace(b'""', b"")
    brackets = _STRING.sub(b"", structure).translate(_OPEN_CLOSE)
    for _ in range(max_depth):
        if not brackets:
            return
        shorter = brackets.replace(b"{}", b"")
        if len(shorter) == len(brackets):
            return  # unbalanced: malformed, and json.loads says where
        brackets = shorter
    if brackets:
        raise InvalidInput(f"{source}: invalid JSON: nested too deeply (over {max_depth} levels)")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


# One decoder for every document (json.loads with hooks builds a new one per call). The hooks run
# only for a number with a fraction or exponent and for NaN/Infinity, so they cost nothing on
# documents without such numbers, as GitHub's payloads mostly are: no pre-scan needed.
_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def has_surrogate_escape(raw: bytes) -> bool:
    """Whether `raw` holds a `\\uD800`-`\\uDFFF` escape (which `loads` checks for a lone one)."""
    return _SURROGATE_ESCAPE.search(raw) is not None


def loads(raw: bytes, source: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in `raw` (size-checked by its reader); InvalidInput naming `source`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{source}: not valid UTF-8 (byte {exc.start})") from None
    check_depth(raw, source, max_depth)
    try:
        if text.startswith("\ufeff"):  # as json.loads: its decoder object does not check this
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        ) from None
    except ValueError as exc:  # an integer past the digit limit, NaN, 1e999
        reason = str(exc).split(";")[0]
        raise InvalidInput(f"{source}: invalid JSON: {reason}") from None
    except RecursionError:  # only if max_depth is above the stack; still input, not a bug
        raise InvalidInput(f"{source}: invalid JSON: nested too deeply") from None
    # `\\` first: a plain memchr, false for most documents, spares them the pattern search.
    if b"\\" in raw and _SURROGATE_ESCAPE.search(raw) and _has_lone_surrogate(value):
        raise InvalidInput(f"{source}: invalid JSON: a string holds a lone surrogate escape")
    return value


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def load_members(raw: bytes, source: str) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The JSON object in `raw` as `loads` reads it, with each member's value also as its own
    JSON text, exactly as written (for a caller that would otherwise encode it again).

    None where `loads` would refuse `raw` or read it as anything but an object: the caller then
    reads `raw` with `loads`, which says why. One parse: the members' values are scanned by the
    same decoder, after the same depth check, with the same surrogate check after.
    """
    try:
        text = raw.decode("utf-8")
        check_depth(raw, source)
    except (UnicodeDecodeError, InvalidInput):
        return None
    skip = _WHITESPACE.match
    scan = _DECODER.scan_once  # type: ignore[attr-defined]
    values: dict[str, Any] = {}
    spans: dict[str, tuple[int, int]] = {}
    at = skip(text, 0).end()  # type: ignore[union-attr]
    if text[at : at + 1] != "{":
        return None  # also a BOM: refused by `loads`
    at = skip(text, at + 1).end()  # type: ignore[union-attr]
    try:
        if text[at : at + 1] == "}":
            at += 1
        else:
            while True:
                if text[at : at + 1] != '"':
                    return None
                key, at = json.decoder.scanstring(text, at + 1, True)  # type: ignore[attr-defined]
                at = skip(text, at).end()  # type: ignore[union-attr]
                if text[at : at + 1] != ":":
                    return None
                start = skip(text, at + 1).end()  # type: ignore[union-attr]
                value, end = scan(text, start)
                values[key] = value  # a repeated member: the last one counts, as in `loads`
                spans[key] = (start, end)
                at = skip(text, end).end()  # type: ignore[union-attr]
                mark = text[at : at + 1]
                at = skip(text, at + 1).end()  # type: ignore[union-attr]
                if mark == "}":
                    break
                if mark != ",":
                    return None
    except (StopIteration, ValueError, RecursionError):
        return None  # malformed, or a number `loads` refuses
    if skip(text, at).end() != len(text):  # type: ignore[union-attr]
        return None
    if b"\\" in raw and _SURROGATE_ESCAPE.search(raw) and _has_lone_surrogate(values):
        return None
    return values, {key: text[start:end] for key, (start, end) in spans.items()}


def load_object(raw: bytes, source: str, *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    value = loads(raw, source, max_depth=max_depth)
    if not isinstance(value, dict):
        raise InvalidInput(f"{source}: expected a JSON object")
    return value


def scrub(text: str) -> str:
    """`text` with any lone surrogate replaced by U+FFFD, so it always encodes as UTF-8."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text
