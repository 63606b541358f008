"""Bounded memory for a streamed derivation: ids sorted on disk, and every id checked for repeats.

`SpooledIds` keeps a group's (time, id) keys in memory up to `MEMORY_KEYS`, then writes them
out as sorted runs to anonymous temporary files and merges the runs when read back (an external
sort): a million rejected claims cost a few hundred KiB of memory, not a list of a million
strings. `SeenIds` finds repeated ids exactly, partitioned by hash on disk.
"""

from __future__ import annotations

import heapq
import json
import tempfile
from collections.abc import Iterator
from typing import IO

from holon.closure.derive import Ids

MEMORY_KEYS = 4096  # keys held before a run is written out
MAX_RUNS = 64  # runs open at once; more are merged into one first


def _line(ident: str) -> str:
    """`ident` as one line: as it is, or as a JSON string if it holds a newline or starts with
    a quote (so any id reads back)."""
    return json.dumps(ident) if "\n" in ident or ident[:1] == '"' else ident


def _read_run(handle: IO[str]) -> Iterator[tuple[int, str]]:
    handle.seek(0)
    for line in handle:
        order, _, ident = line[:-1].partition("\t")
        yield int(order), json.loads(ident) if ident[:1] == '"' else ident


class SpooledIds(Ids):
    """Ids by (time, id), held in memory up to `limit` keys and on disk beyond."""

    def __init__(self, limit: int = MEMORY_KEYS) -> None:
        super().__init__()
        self._limit = limit
        self._runs: list[IO[str]] = []

    def add(self, order: int, ident: str) -> None:
        keys = self._keys
        keys.append((order, ident))
        if len(keys) >= self._limit:
            self._spill()

    def _write(self, keys: Iterator[tuple[int, str]]) -> IO[str]:
        run = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - kept open
        run.writelines(f"{order}\t{_line(ident)}\n" for order, ident in keys)
        return run

    def _spill(self) -> None:
        self._keys.sort()
        self._runs.append(self._write(iter(self._keys)))
        self._keys = []
        if len(self._runs) >= MAX_RUNS:
            merged = self._write(heapq.merge(*(_read_run(run) for run in self._runs)))
            for run in self._runs:
                run.close()
            self._runs = [merged]

    def ordered(self) -> Iterator[tuple[int, str]]:
        return heapq.merge(iter(sorted(self._keys)), *(_read_run(run) for run in self._runs))

    def close(self) -> None:
        for run in self._runs:
            run.close()
        self._runs = []


PART_BYTES = 1024 * 1024  # of the document per partition of the ids
MAX_PARTS = 512
FLUSH_IDS = 8192  # ids held before they are written to their partitions (a power of 2)


class SeenIds:
    """Every id of a document, to tell exactly whether one repeats, in memory that does not
    grow with the document: ids are split by hash into partitions (about one per `PART_BYTES`
    of the document), written out to temporary files as they come, and each partition is read
    back on its own at the end. `add` is one list append (this runs once per item)."""

    def __init__(self, document_bytes: int) -> None:
        parts = 1
        while parts < MAX_PARTS and parts * PART_BYTES < document_bytes:
            parts *= 2
        self.mask = parts - 1
        self.parts: list[list[str]] = [[] for _ in range(parts)]
        self._files: list[IO[str] | None] = [None] * parts

    def flush(self) -> None:
        for index, ids in enumerate(self.parts):
            if not ids:
                continue
            handle = self._files[index]
            if handle is None:
                handle = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
                self._files[index] = handle
            handle.write(_lines(ids))
            ids.clear()

    def repeated(self) -> set[str]:
        """The ids added more than once."""
        found: set[str] = set()
        for index, held in enumerate(self.parts):
            handle = self._files[index]
            ids = list(held)
            if handle is not None:
                handle.seek(0)
                ids.extend(_read_lines(handle.read()))
            unique = set(ids)
            if len(unique) != len(ids):
                for ident in ids:
                    if ident in unique:
                        unique.discard(ident)
                    else:
                        found.add(ident)
        return found

    def close(self) -> None:
        for handle in self._files:
            if handle is not None:
                handle.close()


def _lines(ids: list[str]) -> str:
    """One id a line; an id with a newline in it, or starting with a quote, as a JSON string."""
    joined = "\n".join(ids)
    if joined.count("\n") == len(ids) - 1 and '\n"' not in joined and joined[:1] != '"':
        return joined + "\n"
    return "".join((json.dumps(i) if "\n" in i or i[:1] == '"' else i) + "\n" for i in ids)


def _read_lines(text: str) -> list[str]:
    lines = text.split("\n")
    lines.pop()  # after the last newline
    if '\n"' in text or text[:1] == '"':
        return [json.loads(line) if line[:1] == '"' else line for line in lines]
    return lines
