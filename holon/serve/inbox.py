"""Accepted webhook deliveries, on disk before they are answered 202.

The receiver's promise is that a delivery answered 202 is never lost: GitHub does not redeliver
by itself. So accepting appends the envelope to `inbox.ndjson` in the state directory and syncs
it to disk before the answer. The serve loop takes envelopes in order, marks each handled, and
after a checkpoint has saved what they did, `compact` drops the handled ones from the file. A
serve that is killed or stopped with deliveries still waiting takes them first on its next start;
one taken but not yet checkpointed is taken again, which the controller's dedupe keys and
idempotent intents make safe.

Bounded by count and bytes: a full inbox refuses (the receiver answers 503 with Retry-After).
Only offsets are kept in memory; an envelope is read back from the file when it is taken.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from holon import jsonio
from holon.errors import InvalidInput
from holon.fsutil import open_regular
from holon.gateway.envelope import EventEnvelope, from_outside
from holon.gateway.payload import MAX_PAYLOAD_BYTES
from holon.validation import describe_validation_error

INBOX_FILE = "inbox.ndjson"
DEFAULT_MAX_PENDING = 1000
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
# An envelope line: the payload plus what normalization adds around it.
MAX_LINE_BYTES = MAX_PAYLOAD_BYTES + 1024 * 1024
_COPY_CHUNK = 1024 * 1024


class InboxUnavailable(Exception):
    """The inbox could not be written (disk full, I/O error): nothing was accepted."""


@dataclass(frozen=True)
class Taken:
    """One accepted delivery: its envelope, or why it cannot be read back, and its end offset."""

    end: int
    envelope: EventEnvelope | None
    error: str | None = None


def _open(path: Path) -> int:
    return open_regular(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)


class Inbox:
    """A durable FIFO of envelopes: `offer` from the receiver's threads, `take` and `done` from
    the serve loop, `compact` after each checkpoint.

    Group commit: appends are written one at a time and synced together, so senders arriving
    while one fsync runs share the next. An envelope becomes takeable only once synced, and in
    file order, so "handled" is always a prefix of the file. Offsets are logical: they keep
    growing across compactions (`_base` is where the file starts).

    Locks, always taken in this order: `_write` (appending, the file's end), `_sync` (fsync and
    the file descriptor), `_state` (the queue; held briefly, so the loop never waits on a sync).
    """

    def __init__(
        self,
        state_dir: Path,
        *,
        max_pending: int = DEFAULT_MAX_PENDING,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if max_pending < 1 or max_bytes < 1:
            raise ValueError("an inbox holds at least one delivery")
        self.path = state_dir / INBOX_FILE
        self.max_pending = max_pending
        self.max_bytes = max_bytes
        self._write = threading.Lock()
        self._sync = threading.Lock()
        self._state = threading.Condition()
        self._fd = _open(self.path)
        self._base = 0
        self._end = 0  # written
        self._synced = 0  # on disk
        self._handled = 0
        self._unsynced: deque[tuple[int, int]] = deque()  # written, not yet on disk
        self._pending: deque[tuple[int, int]] = deque()  # on disk, not yet taken
        self._held = 0  # entries in both queues, and their bytes: what the bounds count
        self._held_bytes = 0
        self._load()

    def _load(self) -> None:
        """Every complete line left by an earlier serve is pending; a torn tail (a crash while
        writing, so never answered 202) is cut off."""
        size = os.fstat(self._fd).st_size
        offset = 0
        with os.fdopen(os.dup(self._fd), "rb") as handle:
            handle.seek(0)
            for raw in jsonio.lines(handle, MAX_LINE_BYTES):
                if raw is None or not raw.endswith(b"\n"):
                    break  # an over-long line or a torn tail: nothing after it was written by us
                self._pending.append((offset, len(raw)))
                self._held += 1
                self._held_bytes += len(raw)
                offset += len(raw)
        if offset < size:
            os.ftruncate(self._fd, offset)
        self._end = self._synced = offset

    def __len__(self) -> int:
        with self._state:
            return len(self._pending) + len(self._unsynced)

    def offer(self, envelope: EventEnvelope) -> bool:
        """Write `envelope`, return once it is on disk and queued; False when the inbox is full.

        InboxUnavailable when the disk refuses: the receiver must not answer 202."""
        line = (jsonio.scrub(envelope.model_dump_json()) + "\n").encode("utf-8")
        with self._write:
            with self._state:
                if self._held >= self.max_pending:
                    return False
                if self._held_bytes + len(line) > self.max_bytes:
                    return False
                offset, fd, base = self._end, self._fd, self._base
            try:
                written = 0
                while written < len(line):
                    written += os.write(fd, line[written:])
            except OSError as exc:
                # Leave no partial line behind for the next start to mistake for a delivery.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, offset - base)
                raise InboxUnavailable(exc.strerror or str(exc)) from None
            end = offset + len(line)
            with self._state:
                self._end = end
                self._unsynced.append((offset, len(line)))
                self._held += 1
                self._held_bytes += len(line)
        self._sync_through(end)
        return True

    def _sync_through(self, end: int) -> None:
        """Return once everything up to `end` is on disk: by this caller's fsync, or by one that
        another caller ran meanwhile (which covers every write made before it started)."""
        with self._sync:
            if self._synced >= end:
                return
            with self._state:
                target = self._end  # every write up to here has completed
            try:
                os.fsync(self._fd)
            except OSError as exc:
                # Not on disk: not accepted. It may still be taken after a later sync succeeds,
                # which only repeats a delivery the dedupe key then recognizes.
                raise InboxUnavailable(exc.strerror or str(exc)) from None
            self._synced = target
            with self._state:
                while self._unsynced and sum(self._unsynced[0]) <= target:
                    self._pending.append(self._unsynced.popleft())
                self._state.notify()

    def take(self, timeout: float | None = 0) -> Taken | None:
        """The oldest pending delivery, waiting up to `timeout` seconds; None when none came."""
        with self._state:
            if not self._state.wait_for(lambda: bool(self._pending), timeout):
                return None
            offset, length = self._pending.popleft()
            self._held -= 1
            self._held_bytes -= length
            raw = os.pread(self._fd, length, offset - self._base)
        end = offset + length
        try:
            data = jsonio.load_object(raw, "inbox line")
            return Taken(end, from_outside(EventEnvelope.model_validate(data), "inbox line"))
        except InvalidInput as exc:
            return Taken(end, None, str(exc))
        except ValidationError as exc:
            return Taken(end, None, describe_validation_error("inbox line", exc))

    def done(self, taken: Taken) -> None:
        """`taken` (and everything before it) is handled; `compact` may drop it after a save."""
        with self._state:
            self._handled = max(self._handled, taken.end)

    def compact(self) -> None:
        """Drop the handled deliveries from the file. Call only after the state that records
        what they did is saved: a crash before that takes them again, a crash after it never."""
        with self._write, self._sync, self._state:
            if self._handled <= self._base:
                return
            if self._handled == self._end:
                os.ftruncate(self._fd, 0)  # the common case: everything handled
            else:
                self._rewrite_from(self._handled)
            os.fsync(self._fd)
            self._base = self._handled

    def _rewrite_from(self, start: int) -> None:
        """Keep the lines from logical offset `start` on: copied to a new file renamed over the
        old one, so a crash midway leaves one whole inbox or the other."""
        temp = self.path.with_name(self.path.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        fd = _open(temp)
        try:
            position, end = start - self._base, self._end - self._base
            while position < end:
                chunk = os.pread(self._fd, min(_COPY_CHUNK, end - position), position)
                if not chunk:
                    break
                os.write(fd, chunk)
                position += len(chunk)
            os.fsync(fd)
            os.replace(temp, self.path)
        except BaseException:
            os.close(fd)
            raise
        os.close(self._fd)
        self._fd = fd

    def close(self) -> None:
        with self._write, self._sync, self._state:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def pending_count(state_dir: Path) -> int:
    """How many accepted deliveries wait in a serve's inbox (for status; never modifies it)."""
    try:
        fd = open_regular(state_dir / INBOX_FILE)
    except FileNotFoundError:
        return 0
    count = 0
    with os.fdopen(fd, "rb") as handle:
        for raw in jsonio.lines(handle, MAX_LINE_BYTES):
            if raw is None or not raw.endswith(b"\n"):
                break
            count += 1
    return count
