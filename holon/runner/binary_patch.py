"""What the binary hunks of a `git diff --binary` patch carry, decoded, so that a scan of the patch
for forwarded secrets sees a binary file's bytes and not only the patch's text.

Git writes a binary change as `GIT binary patch`, then hunks of `literal N` (the new contents) or
`delta N` (a delta against the old contents), each as lines of git's base85 (a first character
giving the line's byte count, `A`-`Z` 1 to 26, `a`-`z` 27 to 52) of the zlib-deflated data, and
a blank line; the reverse hunk follows the same way. Literal contents are yielded as inflated;
of a delta, the bytes its insert instructions add (what the new file holds that the old one did
not). A hunk's contents are passed on in one piece (up to `_HELD` bytes: the stream a scan reads
has the patch's text around them, and a value split by it would not be seen). At most
`MAX_DECODED` bytes are decoded per patch (a deflated file of zeros is small).
A hunk that does not decode is skipped: the scan is of what the patch would publish.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Iterable, Iterator

MAX_DECODED = 512 * 1024 * 1024
_PIECE = 1024 * 1024
_HELD = 16 * 1024 * 1024  # a literal's contents are passed on whole up to this size
_HEADER = b"GIT binary patch"


def _line_bytes(line: bytes) -> bytes:
    """One base85 line's bytes; ValueError when it is not one."""
    if not line:
        raise ValueError("empty line")
    first = line[0]
    if ord("A") <= first <= ord("Z"):
        size = first - ord("A") + 1
    elif ord("a") <= first <= ord("z"):
        size = first - ord("a") + 27
    else:
        raise ValueError("not a base85 line")
    try:
        data = base64.b85decode(line[1:])
    except (ValueError, binascii.Error):
        raise ValueError("not base85") from None
    if len(data) < size:
        raise ValueError("short line")
    return data[:size]


def _varint(data: bytes, pos: int) -> int:
    while pos < len(data) and data[pos] & 0x80:
        pos += 1
    return pos + 1


def delta_inserts(delta: bytes) -> Iterator[bytes]:
    """The bytes a git delta's insert instructions add, one run of them per copy between."""
    pos = _varint(data=delta, pos=_varint(delta, 0))  # the source's size, then the result's
    run = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:  # a copy from the old contents: offset and size bytes by flag
            pos += bin(op & 0x7F).count("1")
            if run:
                yield bytes(run)
                run.clear()
        elif op:
            run += delta[pos : pos + op]
            pos += op
    if run:
        yield bytes(run)


class _Hunks:
    """A line-by-line reader of a patch's binary hunks (a small state machine)."""

    def __init__(self) -> None:
        self.state = "text"  # text, header (after `GIT binary patch` or a hunk), data
        self.kind = b""
        self.inflate = zlib.decompressobj()
        self.data = bytearray()
        self.broken = False
        self.budget = MAX_DECODED

    def line(self, raw: bytes) -> Iterator[bytes]:
        line = raw.rstrip(b"\r\n")
        if self.state == "text":
            if line == _HEADER:
                self.state = "header"
            return
        if self.state == "header":
            kind = line.split(b" ", 1)[0]
            if kind in (b"literal", b"delta"):
                self.state, self.kind, self.broken = "data", kind, False
                self.inflate = zlib.decompressobj()
                self.data.clear()
            else:
                self.state = "header" if line == _HEADER else "text"
            return
        if not line:  # the hunk's end
            self.state = "header"
            if self.kind == b"delta" and not self.broken:
                yield from delta_inserts(bytes(self.data))
            elif self.data:
                yield bytes(self.data)
            self.data.clear()
            return
        if self.broken:
            return
        try:
            data = _line_bytes(line)
            yield from self._inflated(data)
        except (ValueError, zlib.error):
            self.broken = True

    def _inflated(self, data: bytes) -> Iterator[bytes]:
        while data and self.budget > 0:
            piece = self.inflate.decompress(data, min(_PIECE, self.budget))
            data = self.inflate.unconsumed_tail
            self.budget -= len(piece)
            self.data += piece
            if self.kind == b"literal" and len(self.data) >= _HELD:
                yield bytes(self.data)
                self.data.clear()


def with_binary_contents(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The patch's chunks as they are, each followed by the binary contents its lines
    completed (decoded as above)."""
    hunks = _Hunks()
    carry = b""
    for chunk in chunks:
        yield chunk
        lines = (carry + chunk).split(b"\n")
        carry = lines.pop()
        for line in lines:
            yield from hunks.line(line)
    if carry:
        yield from hunks.line(carry)
    yield from hunks.line(b"")  # a patch that ends inside a hunk
