"""An evidence document read incrementally from a file: bounded chunks, one item at a time.

`EvidenceReader.members` walks the top-level object (or a bare list of items) and hands back
each member: `items` as an iterator of items, every other member as its decoded value. Items
are validated as they arrive, in batches of about `BATCH` bytes with one call on the batch's
bytes (into dictionaries, holon/closure/fast.py: what `parse_evidence`'s one pass does for a
whole document, without building a model per item); a batch refused, or one holding a
`\\uD800`-style escape, is read again one item at a time through `holon.jsonio` (nesting, NaN and
Infinity, out-of-range numbers, lone surrogates) and the item models, so the item at fault is
named by its index and the line is the in-memory path's. No item may be over `MAX_ITEM_BYTES`
(the whole-document limit of the in-memory path), and memory holds one chunk and one batch.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import IO, Any

from pydantic import TypeAdapter, ValidationError

from holon import jsonio
from holon.closure.evidence import EvidenceItem, describe_item
from holon.closure.fast import batch_adapter
from holon.errors import InvalidInput

CHUNK = 256 * 1024
BATCH = 64 * 1024
MAX_ITEM_BYTES = 25 * 1024 * 1024  # what one whole document may be on the in-memory path
_WINDOW = 4096  # first guess at one value's size; doubled until it holds the value

_WS = re.compile(rb"[ \t\n\r]*")
# After an item's closing brace: the next item or the array's end.
_NEXT = re.compile(rb"[ \t\n\r]*(?:,[ \t\n\r]*\{|\])")
_DECODER = json.JSONDecoder()
_ITEM: TypeAdapter[Any] | None = None


def item_adapter() -> TypeAdapter[Any]:
    """The evidence item models (a discriminated union), built on first use."""
    global _ITEM
    if _ITEM is None:
        _ITEM = TypeAdapter(EvidenceItem)
    return _ITEM


def _limit_text() -> str:
    return f"{MAX_ITEM_BYTES / (1024 * 1024):g} MiB"


class EvidenceReader:
    """One pass over an evidence document in `handle` (a file opened for bytes)."""

    def __init__(self, handle: IO[bytes], source: str) -> None:
        self._handle = handle
        self._source = source
        self._buf = b""
        self._pos = 0
        self._offset = 0  # of _buf[0] in the file
        self._eof = False

    # -- bytes ---------------------------------------------------------------------------

    def _fill(self, want: int) -> bool:
        """At least `want` bytes after the position, unless the file ends first; False if
        nothing more could be read."""
        if len(self._buf) - self._pos >= want or self._eof:
            return False
        if self._pos:
            self._offset += self._pos
            self._buf = self._buf[self._pos :]
            self._pos = 0
        parts = [self._buf]
        have = len(self._buf)
        while have < want:
            try:
                chunk = self._handle.read(max(CHUNK, want - have))
            except OSError as exc:
                raise InvalidInput(f"cannot read {self._source}: {exc.strerror or exc}") from None
            if not chunk:
                self._eof = True
                break
            parts.append(chunk)
            have += len(chunk)
        grew = have > len(self._buf)
        self._buf = b"".join(parts)
        return grew

    def _peek(self) -> int | None:
        """The next byte that is not whitespace (the position moved onto it), None at the end."""
        while True:
            end = _WS.match(self._buf, self._pos)
            assert end is not None
            self._pos = end.end()
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill(1):
                return None

    def _fail(self, what: str) -> InvalidInput:
        return InvalidInput(
            f"{self._source}: invalid JSON at byte {self._offset + self._pos} ({what})"
        )

    def _expect(self, allowed: bytes, what: str) -> int:
        byte = self._peek()
        if byte is None or byte not in allowed:
            raise self._fail(what)
        self._pos += 1
        return byte

    # -- one value, by holon.jsonio's rules --------------------------------------------------

    def _value(self, label: str, depth: int) -> Any:
        """The JSON value at the position, checked as `jsonio.loads` checks a document, `depth`
        levels down in it; InvalidInput naming `label`."""
        if self._peek() is None:
            raise InvalidInput(
                f"{label}: invalid JSON at byte {self._offset + self._pos} (Expecting value)"
            )
        window = _WINDOW
        while True:
            self._fill(window)
            data = self._buf[self._pos : self._pos + window]
            whole = self._eof and self._pos + window >= len(self._buf)
            try:
                text, _ = codecs.utf_8_decode(data, "strict", whole)
            except UnicodeDecodeError as exc:
                at = self._offset + self._pos + exc.start
                raise InvalidInput(f"{self._source}: not valid UTF-8 (byte {at})") from None
            try:
                _, end = _DECODER.raw_decode(text)
            except RecursionError:
                raise InvalidInput(
                    f"{label}: invalid JSON: nested too deeply (over {jsonio.MAX_DEPTH} levels)"
                ) from None
            except ValueError as exc:
                if not whole:
                    if window >= MAX_ITEM_BYTES:
                        raise InvalidInput(f"{label}: over the {_limit_text()} limit") from None
                    window *= 2
                    continue
                what = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                pos = exc.pos if isinstance(exc, json.JSONDecodeError) else 0
                at = self._offset + self._pos + len(text[:pos].encode("utf-8", "surrogatepass"))
                raise InvalidInput(
                    f"{label}: invalid JSON at byte {at} ({what.split(';')[0]})"
                ) from None
            if end == len(text) and not whole:  # a number may go on past the window
                window *= 2
                continue
            size = len(text[:end].encode("utf-8", "surrogatepass"))
            if size > MAX_ITEM_BYTES:
                raise InvalidInput(f"{label}: over the {_limit_text()} limit")
            raw = self._buf[self._pos : self._pos + size]
            self._pos += size
            try:
                return jsonio.loads(raw, label, max_depth=jsonio.MAX_DEPTH - depth)
            except InvalidInput as exc:
                if "nested too deeply" not in str(exc):
                    raise
                raise InvalidInput(
                    f"{label}: invalid JSON: nested too deeply (over {jsonio.MAX_DEPTH} levels)"
                ) from None

    # -- the document ------------------------------------------------------------------------

    def members(self) -> Iterator[tuple[str, Any]]:
        """(name, value) for each top-level member in order; `items`' value is an iterator of
        validated items, to be consumed before the next member. A bare list is `items`."""
        first = self._peek()
        if first == ord("["):
            self._pos += 1
            yield "items", self._items(depth=1)
        elif first == ord("{"):
            self._pos += 1
            yield from self._object()
        elif first is None:
            raise self._fail("Expecting value")
        else:
            raise InvalidInput(f"{self._source}: expected a JSON object with `items`")
        if self._peek() is not None:
            raise self._fail("Extra data")

    def _object(self) -> Iterator[tuple[str, Any]]:
        if self._peek() == ord("}"):
            self._pos += 1
            return
        while True:
            if self._peek() != ord('"'):
                raise self._fail("Expecting property name enclosed in double quotes")
            name = self._value(f"{self._source}: a member name", depth=1)
            self._expect(b":", "Expecting ':' delimiter")
            if name == "items" and self._peek() == ord("["):
                self._pos += 1
                yield name, self._items(depth=2)
            else:
                yield name, self._value(f"{self._source}: {name}", depth=1)
            if self._expect(b",}", "Expecting ',' delimiter") == ord("}"):
                return

    def _items(self, depth: int) -> Iterator[EvidenceItem | dict[str, Any]]:
        one, batch = item_adapter(), batch_adapter()
        index = 0
        slow_until = -1  # a refused batch is read again item by item up to here
        if self._peek() == ord("]"):
            self._pos += 1
            return
        while True:
            self._fill(BATCH)
            start = self._offset + self._pos
            cut = -1 if start < slow_until else self._cut()
            if cut > 0:
                chunk = self._buf[self._pos : cut + 1]
                models: list[dict[str, Any]] | None = None
                if not jsonio.has_surrogate_escape(chunk):
                    try:
                        models = batch.validate_json(b"[" + chunk + b"]")
                    except ValidationError:
                        slow_until = self._offset + cut
                if models is not None:
                    self._pos = cut + 1
                    index += len(models)
                    yield from models
                    if self._expect(b",]", "Expecting ',' delimiter") == ord("]"):
                        return
                    continue
                slow_until = self._offset + cut
            label = f"{self._source}: evidence item #{index + 1}"
            value = self._value(label, depth)
            try:
                item = one.validate_python(value)
            except ValidationError as exc:
                raise InvalidInput(f"{self._source}: {describe_item(exc, index, value)}") from None
            index += 1
            yield item
            if self._expect(b",]", "Expecting ',' delimiter") == ord("]"):
                return

    def _cut(self) -> int:
        """The end of the last whole item in the next `BATCH` bytes (a `}` followed by `, {` or
        `]`), or -1. A `}` inside a string can look the same: then the batch is not valid JSON
        and is read again item by item."""
        buf, pos = self._buf, self._pos
        end = min(len(buf), pos + BATCH)
        following = _NEXT.match
        while True:
            cut = buf.rfind(b"}", pos, end)
            if cut < 0:
                return -1
            if following(buf, cut + 1):
                return cut
            end = cut
