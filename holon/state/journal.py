"""Append-only ndjson journals (events, decisions, actions): one compact JSON object a line.

Every entry carries a deterministic "id" given by the caller, so journals written by two writers
union cleanly (`merge_journal_entries`). A line counts once its newline is on disk: a torn last line
(a crash mid-write) is skipped by `read` and cut off before the next append.

Files rotate by size, and rotation only renames: path -> path.<n>, n one above the highest segment
there, so path.1, path.2, ... are the older segments, oldest first. By default every segment is
kept: the journals are the complete record (state.json is pruned; they are not). An operator may
bound them (`keep`): the oldest segments beyond it are then deleted at rotation, and each deletion
is first written into the new file as a marker line (key `journal_dropped`: the segment, how many
entries, its first and last id), with the markers the deleted segment held carried over, so no
gap is silent. `read` skips markers; `dropped` lists them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from holon import crashpoints, jsonio
from holon.errors import InvalidInput
from holon.fsutil import open_regular

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
# The key of marker lines (a deleted segment); appended entries may not use it.
DROPPED = "journal_dropped"
# Restored journals are outside input: a longer line is corrupt, and never read whole.
MAX_LINE_BYTES = 32 * 1024 * 1024
_TAIL_CHUNK = 64 * 1024
# Stands for a value written verbatim (`Journal.append_verbatim`): unguessable, so no outside
# text can hold it.
_VERBATIM = f"\x00verbatim:{secrets.token_hex(16)}"
_VERBATIM_JSON = json.dumps(_VERBATIM).encode("ascii")


class CorruptJournal(InvalidInput):
    """A line other than a file's last one is not a JSON entry with an id."""


def _entry_id(entry: Mapping[str, Any]) -> str:
    entry_id = entry.get("id")
    if not isinstance(entry_id, str) or not entry_id:
        raise ValueError(f"journal entry needs a non-empty string 'id': {dict(entry)!r:.120}")
    return entry_id


def dumps(value: Any) -> str:
    """A value as journal lines write it: keys sorted, compact, no NaN, and scrubbed (outside
    text may hold a lone surrogate, which must not stop the journal)."""
    return jsonio.scrub(_ENCODER.encode(value))


# What `json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
# allow_nan=False)` makes a new one of for every call (several lines per event in a serve).
_ENCODER = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
)


def _dumps(entry: Mapping[str, Any]) -> str:
    return dumps(dict(entry))


def _encode(entry: Mapping[str, Any]) -> bytes:
    _entry_id(entry)
    if DROPPED in entry:
        raise ValueError(f"journal entry may not use the reserved key {DROPPED!r}")
    return (_dumps(entry) + "\n").encode("utf-8")


def _decode(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:  # a line over MAX_LINE_BYTES
        return None
    try:
        value = jsonio.loads(raw, "journal line")
    except InvalidInput:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        return None
    return value


def _fsync_dir(directory: Path) -> None:
    # Renames are durable only once the directory itself is synced.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut_torn_tail(fd: int) -> int:
    """Truncate bytes after the last newline (a torn write); return the resulting size."""
    size = os.fstat(fd).st_size
    end, keep = size, 0
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        newline = os.pread(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        end = start
    if keep < size:
        os.ftruncate(fd, keep)
    return keep


def _read_file(path: Path) -> Iterator[dict[str, Any]]:
    try:
        handle = os.fdopen(open_regular(path), "rb")
    except FileNotFoundError:
        return
    with handle:
        # Hold each line back one step: only the file's last line may be torn or corrupt.
        pending: tuple[int, bytes | None] | None = None
        for number, raw in enumerate(jsonio.lines(handle, MAX_LINE_BYTES), 1):
            if pending is not None:
                yield from _strict(path, *pending)
            pending = (number, raw)
        if pending is not None and pending[1] is not None and pending[1].endswith(b"\n"):
            entry = _decode(pending[1])
            if entry is not None:
                yield entry


def _strict(path: Path, number: int, raw: bytes | None) -> Iterator[dict[str, Any]]:
    if raw is not None and not raw.strip():
        return
    entry = _decode(raw)
    if entry is None:
        raise CorruptJournal(f"journal {path} line {number} is not a JSON entry with a string id")
    yield entry


def _summary(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What a segment about to be deleted held: its marker, and the markers inside it.

    Tolerant: a corrupt line is not counted, and never stops a rotation."""
    entries, first, last = 0, None, None
    carried: list[dict[str, Any]] = []
    with os.fdopen(open_regular(path), "rb") as handle:
        for raw in jsonio.lines(handle, MAX_LINE_BYTES):
            entry = _decode(raw) if raw is not None and raw.endswith(b"\n") else None
            if entry is None:
                continue
            if DROPPED in entry:
                carried.append(entry)
                continue
            entries += 1
            first = first or entry["id"]
            last = entry["id"]
        size = os.fstat(handle.fileno()).st_size
    what = {
        "segment": path.name,
        "entries": entries,
        "bytes": size,
        "first_id": first,
        "last_id": last,
    }
    # The id hashes what was dropped: a rotation repeated after a kill marks it again under the
    # same id.
    digest = hashlib.sha256(_dumps(what).encode("utf-8")).hexdigest()[:24]
    marker = {"id": f"dropped:{digest}", "at": datetime.now(UTC).isoformat(), DROPPED: what}
    return marker, carried


def _segment_number(marker: Mapping[str, Any]) -> int:
    what = marker.get(DROPPED)
    number = str(what.get("segment", "")).rpartition(".")[2] if isinstance(what, dict) else ""
    return int(number) if number.isdigit() else 0


class Journal:
    """One append-only journal file with its rotated segments. Not thread-safe.

    `keep`: None (the default) keeps every segment; a number (at least 1) keeps at most that many
    of the newest, deleting older ones at rotation, each recorded by a marker line.
    """

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int | None = None,
        fsync: bool = True,
    ) -> None:
        # keep >= 1: the newest segment always stays, so segment numbers are never reused.
        if max_bytes < 1 or (keep is not None and keep < 1):
            raise ValueError("max_bytes and keep (when set) must be positive")
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self.fsync = fsync
        self._fd: int | None = None
        self._size = 0
        self._segment_name = re.compile(re.escape(path.name) + r"\.([1-9][0-9]*)")

    def append(self, entry: Mapping[str, Any]) -> None:
        """Append one entry as one line (ValueError if it has no string id)."""
        self._write(_encode(entry))

    def append_verbatim(self, entry: Mapping[str, Any], path: tuple[str, ...], text: str) -> None:
        """Append `entry` with the value at `path` (keys, outermost first) written as `text`, that
        value's own JSON text as it was read (`jsonio.load_members`), rather than encoded again.

        A reader parses the same entry; only the spacing and key order inside that value are the
        text's own. `text` must be one valid JSON value on one line (ValueError if it is not
        one line)."""
        if not path or "\n" in text:
            raise ValueError("a verbatim value needs a key path and one line of JSON")
        outer = dict(entry)
        inner = outer
        for key in path[:-1]:
            inner[key] = dict(inner[key])
            inner = inner[key]
        inner[path[-1]] = _VERBATIM
        head, found, tail = _encode(outer).partition(_VERBATIM_JSON)
        if not found or _VERBATIM_JSON in tail:
            raise ValueError("the verbatim value's place was not found once")
        self._write(b"".join((head, text.encode("utf-8"), tail)))

    def append_line(self, line: bytes) -> None:
        """Append one line its caller encoded as `append` encodes its entry (the caller's own
        tests hold it to that): one line, ending in its newline."""
        if not line.endswith(b"\n") or b"\n" in line[:-1]:
            raise ValueError("a journal line is one line ending in a newline")
        self._write(line)

    def append_many(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """Append a batch with one write and one fsync; nothing is written if any entry is bad."""
        data = b"".join(_encode(entry) for entry in entries)
        if data:
            self._write(data)

    def segments(self) -> list[Path]:
        """The rotated segments, oldest first (the file being appended to is not one)."""
        try:
            with os.scandir(self.path.parent) as found:
                numbered = [
                    (int(match.group(1)), item.name)
                    for item in found
                    # Any entry with a segment's name counts: one that is not a regular file
                    # (a planted link or FIFO) is then refused when read, never skipped silently.
                    if (match := self._segment_name.fullmatch(item.name))
                ]
        except FileNotFoundError:
            return []
        return [self.path.with_name(name) for _, name in sorted(numbered)]

    def read(self) -> Iterator[dict[str, Any]]:
        """All entries, oldest segment first; a torn or corrupt last line of a file is skipped.

        CorruptJournal if any other line is not a JSON object with a string id. Markers of
        deleted segments are not entries: see `dropped`.
        """
        for path in [*self.segments(), self.path]:
            for entry in _read_file(path):
                if DROPPED not in entry:
                    yield entry

    def dropped(self) -> list[dict[str, Any]]:
        """The markers of segments a `keep` bound deleted, each once, oldest segment first."""
        markers: dict[str, dict[str, Any]] = {}
        for path in [*self.segments(), self.path]:
            for entry in _read_file(path):
                if DROPPED in entry:
                    markers.setdefault(entry["id"], entry)
        # Carried over from file to file, markers are not stored in order; their numbers are.
        return sorted(markers.values(), key=_segment_number)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def open(self) -> None:
        """Open (and check) the file now rather than at the first append: a link or FIFO in its
        place is refused before anything is done."""
        self._open()

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A restored state directory is outside input: a link here is never written through.
            fd = open_regular(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                self._size = _cut_torn_tail(fd)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    def _write(self, data: bytes) -> None:
        self._open()
        if self._size and self._size + len(data) > self.max_bytes:
            self._rotate()
        if crashpoints.armed():
            crashpoints.point(f"journal.{self.path.stem}:before")
        self._put(data)
        if crashpoints.armed():
            crashpoints.point(f"journal.{self.path.stem}:after")

    def _put(self, data: bytes) -> None:
        fd = self._open()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if self.fsync:
                os.fsync(fd)
        except BaseException:
            # Reopening later cuts any torn tail and re-reads the true size.
            self.close()
            raise
        self._size += len(data)

    def _rotate(self) -> None:
        # One rename: a kill before it changes nothing, after it the next write starts a new file.
        self.close()
        segments = self.segments()
        number = int(segments[-1].name.rpartition(".")[2]) + 1 if segments else 1
        newest = self.path.with_name(f"{self.path.name}.{number}")
        os.replace(self.path, newest)
        segments.append(newest)
        if self.fsync:
            _fsync_dir(self.path.parent)
        if self.keep is None or len(segments) <= self.keep:
            return
        doomed = segments[: len(segments) - self.keep]
        markers: dict[str, dict[str, Any]] = {}
        for path in doomed:
            marker, carried = _summary(path)
            for old in carried:
                markers.setdefault(old["id"], old)
            markers.setdefault(marker["id"], marker)
        # The markers are on disk before anything is deleted: a kill in between leaves both the
        # segments and their markers (marked again, under the same ids, by the next rotation).
        self._put(b"".join((_dumps(m) + "\n").encode("utf-8") for m in markers.values()))
        for path in doomed:
            path.unlink(missing_ok=True)
        if self.fsync:
            _fsync_dir(self.path.parent)


def merge_journal_entries(
    a: Iterable[Mapping[str, Any]], b: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Union by "id", each id once, ordered by (at, id).

    Two different entries under one id (which deterministic ids should rule out) resolve to the
    one with the smaller canonical JSON, so the result does not depend on argument order.
    """
    chosen: dict[str, dict[str, Any]] = {}
    for entry in itertools.chain(a, b):
        entry_id = _entry_id(entry)
        current = chosen.get(entry_id)
        if current is None or (current != entry and _dumps(entry) < _dumps(current)):
            chosen[entry_id] = dict(entry)
    return sorted(chosen.values(), key=lambda e: (str(e.get("at", "")), e["id"]))
