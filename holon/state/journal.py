"""Append-only ndjson journals (events, decisions, actions): one compact JSON object a line.

Every entry carries a deterministic "id" given by the caller, so journals written by two writers
union cleanly (`merge_journal_entries`). A line counts once its newline is on disk: a torn last line
(a crash mid-write) is skipped by `read` and cut off before the next append. Files rotate by size:
path -> path.1 -> path.2 ... -> path.<keep>, the oldest dropped.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from holon import jsonio
from holon.errors import InvalidInput

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_KEEP = 5
# Restored journals are outside input: a longer line is corrupt, and never read whole.
MAX_LINE_BYTES = 32 * 1024 * 1024
_TAIL_CHUNK = 64 * 1024


class CorruptJournal(InvalidInput):
    """A line other than a file's last one is not a JSON entry with an id."""


def _entry_id(entry: Mapping[str, Any]) -> str:
    entry_id = entry.get("id")
    if not isinstance(entry_id, str) or not entry_id:
        raise ValueError(f"journal entry needs a non-empty string 'id': {dict(entry)!r:.120}")
    return entry_id


def _dumps(entry: Mapping[str, Any]) -> str:
    # Scrubbed: outside text may hold a lone surrogate, which must not stop the journal.
    return jsonio.scrub(
        json.dumps(
            dict(entry), sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    )


def _encode(entry: Mapping[str, Any]) -> bytes:
    _entry_id(entry)
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
        handle = path.open("rb")
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


class Journal:
    """One append-only journal file with its rotated predecessors. Not thread-safe."""

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int = DEFAULT_KEEP,
        fsync: bool = True,
    ) -> None:
        if max_bytes < 1 or keep < 0:
            raise ValueError("max_bytes must be positive and keep not negative")
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self.fsync = fsync
        self._fd: int | None = None
        self._size = 0

    def append(self, entry: Mapping[str, Any]) -> None:
        """Append one entry as one line (ValueError if it has no string id)."""
        self._write(_encode(entry))

    def append_many(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """Append a batch with one write and one fsync; nothing is written if any entry is bad."""
        data = b"".join(_encode(entry) for entry in entries)
        if data:
            self._write(data)

    def read(self) -> Iterator[dict[str, Any]]:
        """All entries, oldest rotated file first; a torn or corrupt last line of a file is skipped.

        CorruptJournal if any other line is not a JSON object with a string id.
        """
        for path in [*(self._rotated(i) for i in range(self.keep, 0, -1)), self.path]:
            yield from _read_file(path)

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

    def _rotated(self, index: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{index}")

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                self._size = _cut_torn_tail(fd)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    def _write(self, data: bytes) -> None:
        fd = self._open()
        if self._size and self._size + len(data) > self.max_bytes:
            self._rotate()
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
        self.close()
        if self.keep == 0:
            self.path.unlink(missing_ok=True)
        else:
            for index in range(self.keep - 1, 0, -1):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(self._rotated(index), self._rotated(index + 1))
            os.replace(self.path, self._rotated(1))
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
