"""The agent's output as Holon keeps it (`run.log`): streamed while the run goes, redacted, capped.

Both backends hand every chunk the agent prints to an AgentLog. Forwarded secrets are replaced by
a fixed marker (also when split across chunks); of what remains, the first and the last half of the
limit are kept and the middle is dropped, with a marker line where the cut is. Memory holds at most
the tail half, so an agent printing gigabytes costs disk and memory of the limit only.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from holon.secrets import Redactor, StreamRedactor

if TYPE_CHECKING:
    from holon.runner.record import LogInfo

DEFAULT_LOG_LIMIT = 16 * 1024 * 1024


def cut_marker(omitted: int) -> bytes:
    return f"\n[holon: {omitted} bytes of agent output cut here]\n".encode()


class AgentLog:
    def __init__(self, path: Path, limit: int, redactor: Redactor) -> None:
        self.path = path
        self.limit = limit
        # Kept open from creation to the end: the kept output is read back through this handle,
        # never by path, which a local agent could replace.
        self._file = path.open("w+b")
        self._head_room = limit - limit // 2
        self._tail_limit = limit // 2
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self._total = 0
        self._dropped = 0
        self._stream = StreamRedactor(redactor)
        self._lock = threading.Lock()
        self._info: LogInfo | None = None

    def write(self, chunk: bytes) -> None:
        with self._lock:
            if self._info is None:  # a straggling reader after close writes nothing
                self._take(self._stream.feed(chunk))

    def _take(self, data: bytes) -> None:
        self._total += len(data)
        if self._head_room > 0 and data:
            head = data[: self._head_room]
            self._file.write(head)
            self._head_room -= len(head)
            data = data[len(head) :]
        if not data:
            return
        self._tail.append(data)
        self._tail_bytes += len(data)
        while self._tail and self._tail_bytes - len(self._tail[0]) >= self._tail_limit:
            first = self._tail.popleft()
            self._tail_bytes -= len(first)
            self._dropped += len(first)
        excess = self._tail_bytes - self._tail_limit
        if excess > 0:
            self._tail[0] = self._tail[0][excess:]
            self._tail_bytes -= excess
            self._dropped += excess

    def close(self) -> LogInfo:
        """Write what is kept and say what was cut; later writes are ignored."""
        with self._lock:
            if self._info is not None:
                return self._info
            self._take(self._stream.flush())
            cut_at = None
            if self._dropped:
                cut_at = self._file.tell()
                self._file.write(cut_marker(self._dropped))
            for chunk in self._tail:
                self._file.write(chunk)
            self._tail.clear()
            self._file.flush()
            from holon.runner.record import LogInfo

            self._info = LogInfo(
                path=None,
                bytes=self._total,
                kept_bytes=self._total - self._dropped,
                limit=self.limit,
                cut_at=cut_at,
                cut_bytes=self._dropped,
                redactions=self._stream.replaced,
            )
            return self._info

    def kept(self) -> Iterator[bytes]:
        """What run.log holds, read back from the file written (call after close)."""
        self._file.seek(0)
        while chunk := self._file.read(1024 * 1024):
            yield chunk

    def release(self) -> None:
        self._file.close()
