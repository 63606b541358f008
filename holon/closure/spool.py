"""Bounded memory for a streamed derivation: ids sorted on disk, and a Bloom filter of ids.

`SpooledIds` keeps a group's (time, id) keys in memory up to `MEMORY_KEYS`, then writes them
out as sorted runs to anonymous temporary files and merges the runs when read back (an external
sort): a million rejected claims cost a few hundred KiB of memory, not a list of a million
strings. `Bloom` answers "maybe seen" for a fixed number of bytes whatever the number of ids;
what it flags is checked exactly by a second pass (holon/closure/stream.py).
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


def _read_run(handle: IO[str]) -> Iterator[tuple[int, str]]:
    handle.seek(0)
    for line in handle:
        order, _, ident = line.partition("\t")
        yield int(order), json.loads(ident)


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
        dumps = json.dumps
        run.writelines(f"{order}\t{dumps(ident)}\n" for order, ident in keys)
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


BLOOM_BITS_LOG2 = 28  # 2**28 bits: 32 MiB, whatever the document's size
_MASK = (1 << BLOOM_BITS_LOG2) - 1
_WORD = (1 << 64) - 1


class Bloom:
    """A Bloom filter of strings with 4 probes in 2**28 bits: about one false "maybe" in
    15 million at a million ids. Its pages are touched up front, so its resident size is the
    same for ten ids as for ten million (memory stays flat as a document grows)."""

    def __init__(self) -> None:
        size = 1 << (BLOOM_BITS_LOG2 - 3)
        self._bits = bits = bytearray(size)
        bits[::4096] = bytes(size // 4096)  # one write per page: resident now, not later

    def add(self, key: str) -> bool:
        """Record `key`; True if it may have been added before (False: certainly not)."""
        h = hash(key) & _WORD
        a = h & _MASK
        b = (h >> 32) | 1
        bits = self._bits
        seen = True
        for _ in range(4):
            byte, bit = a >> 3, 1 << (a & 7)
            if not bits[byte] & bit:
                bits[byte] |= bit
                seen = False
            a = (a + b) & _MASK
        return seen

    def clear(self) -> None:
        self._bits[:] = bytes(len(self._bits))
