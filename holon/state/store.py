"""The serve state directory: its lock, state.json (with state.json.prev), control inbox, journals.

Layout of D: state.lock (flock + holder pid), state.json, state.json.prev, control/*.json (commands
for a running serve; malformed ones moved to control/rejected/), <name>.ndjson journals with their
rotated segments <name>.ndjson.1, .2, ... (oldest first).

Checkpoint policy: the store saves only when asked; the caller decides when. The controller saves
after recording an inflight intent and before carrying out its effect (so a crash cannot repeat an
effect the state does not know about), and again at the end of each pass. Each save is atomic, and
the file it replaces is kept as state.json.prev.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from holon import crashpoints, jsonio
from holon.errors import InvalidInput
from holon.fsutil import atomic_write_bytes, atomic_write_chunks, atomic_write_text, open_regular
from holon.state.control import control_name, encode_control, is_control_name, parse_control
from holon.state.journal import DEFAULT_MAX_BYTES, Journal
from holon.state.model import ServeState, StateJSON

STATE = "state.json"
PREV = "state.json.prev"
LOCK = "state.lock"
CONTROL = "control"
REJECTED = "rejected"
# Opening the lock never follows a link and never waits for a FIFO writer.
_UNFOLLOWED = os.O_NOFOLLOW | os.O_NONBLOCK
_JOURNAL_NAME = re.compile(r"[a-z][a-z0-9_-]*")


class StateLocked(InvalidInput):
    """Another holon serve holds the state directory."""


class CorruptState(InvalidInput):
    """state.json cannot be read or parsed; it is left as it was."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


MAX_STATE_BYTES = 64 * 1024 * 1024
MAX_CONTROL_BYTES = 1024 * 1024
# How recent a control directory's timestamps must not be for a serve to trust them unchanged.
CONTROL_RACY_SECONDS = 2


def _validation_problem(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    message = first["msg"].removeprefix("Value error, ")
    return _one_line(f"{where + ': ' if where else ''}{message}{more}")


class StateStore:
    """One state directory. Nothing is created until acquire, save, post_control or a journal."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.state_path = directory / STATE
        self.prev_path = directory / PREV
        self.lock_path = directory / LOCK
        self.control_dir = directory / CONTROL
        self._lock_fd: int | None = None
        self._json = StateJSON()  # each record serialized once, not at every save
        # The control directory as a scan last found it empty (see `take_new_controls`).
        self._controls_empty: tuple[int, int, int] | bool | None = False

    def _not_writable(self, exc: OSError) -> InvalidInput:
        reason = exc.strerror or str(exc)
        return InvalidInput(f"state dir {self.directory} is not writable: {reason}")

    def acquire(self) -> None:
        """Take the exclusive lock (idempotent); StateLocked if another holder has it."""
        if self._lock_fd is not None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # A restored state dir is not trusted: the pid is written through this fd, so it must
            # be a regular file of the directory, never a link to one elsewhere, nor a FIFO.
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | _UNFOLLOWED, 0o644)
        except OSError as exc:
            raise self._not_writable(exc) from exc
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InvalidInput(f"state dir {self.directory}: {LOCK} is not a regular file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StateLocked(
                f"state dir {self.directory} is locked by another holon serve (pid {pid})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            os.ftruncate(fd, 0)  # no stale pid for the next reader
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> StateStore:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    def is_locked(self) -> bool:
        """True if someone other than this store (another process or store) holds the lock."""
        if self._lock_fd is not None:
            return False
        try:
            fd = os.open(self.lock_path, os.O_RDONLY | _UNFOLLOWED)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise InvalidInput(
                f"state dir {self.directory} is not usable: {exc.strerror or exc}"
            ) from exc
        try:
            # A shared probe conflicts with a holder's exclusive lock but not with other probes.
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing also drops the probe's lock
        return False

    def load(self) -> ServeState:
        """The saved state; empty if none. CorruptState (file untouched) if it cannot be used."""
        try:
            with os.fdopen(open_regular(self.state_path), "rb") as handle:
                raw = handle.read(MAX_STATE_BYTES + 1)  # restored state is outside input
        except FileNotFoundError:
            return ServeState()
        except InvalidInput as exc:
            raise self._corrupt(str(exc).removeprefix(f"{self.state_path} ")) from exc
        except OSError as exc:
            raise self._corrupt(f"unreadable: {exc.strerror or exc}") from exc
        if len(raw) > MAX_STATE_BYTES:
            raise self._corrupt(f"over the {MAX_STATE_BYTES // (1024 * 1024)} MiB limit")
        try:
            jsonio.loads(raw, STATE)  # depth, surrogates, huge numbers: before pydantic sees it
        except InvalidInput as exc:
            raise self._corrupt(str(exc)) from exc
        try:
            return ServeState.model_validate_json(raw)
        except ValidationError as exc:
            raise self._corrupt(_validation_problem(exc)) from exc

    def _corrupt(self, problem: str) -> CorruptState:
        return CorruptState(
            f"state file {self.state_path} is unusable ({problem}); it was left untouched: "
            f"move it aside to start fresh, or copy {PREV} over it"
        )

    def save(self, state: ServeState) -> None:
        """Atomically replace state.json, keeping the replaced file as state.json.prev."""
        # Compact on purpose, defaults left out (a missing rank is recomputed from the status):
        # the file must stay small.
        data = self._json.chunks(state)
        crashpoints.point("state.save:before")
        try:
            self._keep_previous()
            atomic_write_chunks(self.state_path, data)
        except OSError as exc:
            raise self._not_writable(exc) from exc
        crashpoints.point("state.save:after")

    def _keep_previous(self) -> None:
        # A hard link shares the current file's inode, so .prev costs no copy; the atomic write
        # below then puts a new inode under state.json and .prev keeps the old one.
        tmp = self.directory / f".{PREV}.{os.getpid()}.tmp"
        tmp.unlink(missing_ok=True)
        try:
            os.link(self.state_path, tmp)
        except FileNotFoundError:
            return  # first save: nothing to keep
        except OSError:
            # No hard links on this filesystem: copy instead.
            atomic_write_bytes(self.prev_path, self.state_path.read_bytes())
            return
        try:
            os.replace(tmp, self.prev_path)
        finally:
            tmp.unlink(missing_ok=True)

    def post_control(self, command: Mapping[str, Any]) -> Path:
        """Drop a command (e.g. {"command": "pause", ...}) into the inbox; return its file."""
        text = encode_control(command)
        path = self.control_dir / control_name()
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            raise self._not_writable(exc) from exc
        return path

    def take_new_controls(self) -> list[dict[str, Any]]:
        """`take_controls`, without listing the directory while it is unchanged since a listing
        found it empty: a running serve asks before every event, and a stat costs far less.

        Unchanged means the same inode, modification and change times. A time within
        CONTROL_RACY_SECONDS of the clock is not trusted (a filesystem's timestamps may be
        coarse: a command posted in the same tick as the listing would not change them), so
        for that long after any change the directory is listed every time."""
        try:
            found = os.stat(self.control_dir)
            seen: tuple[int, int, int] | None = (
                found.st_ino,
                found.st_mtime_ns,
                found.st_ctime_ns,
            )
        except FileNotFoundError:
            seen = None
        except OSError:
            seen = None
            self._controls_empty = False  # listed, and its error said, every time
        if self._controls_empty is not False and seen == self._controls_empty:
            return []
        taken = self.take_controls()
        racy = time.time_ns() - CONTROL_RACY_SECONDS * 1_000_000_000
        settled = seen is None or max(seen[1], seen[2]) < racy
        self._controls_empty = seen if not taken and settled else False
        return taken

    def take_controls(self) -> list[dict[str, Any]]:
        """Pending commands, oldest first, each removed; malformed ones go to control/rejected/."""
        try:
            with os.scandir(self.control_dir) as entries:
                names = sorted(e.name for e in entries if is_control_name(e.name) and e.is_file())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._not_writable(exc) from exc
        taken: list[dict[str, Any]] = []
        for name in names:
            path = self.control_dir / name
            try:
                try:
                    with os.fdopen(open_regular(path), "rb") as handle:
                        raw = handle.read(MAX_CONTROL_BYTES + 1)
                except InvalidInput:
                    raw = b""  # a link or FIFO posted as a command: rejected, never followed
                command = parse_control(raw) if 0 < len(raw) <= MAX_CONTROL_BYTES else None
                if command is None:
                    (self.control_dir / REJECTED).mkdir(exist_ok=True)
                    os.replace(path, self.control_dir / REJECTED / name)
                    continue
                path.unlink()
            except FileNotFoundError:
                continue  # taken meanwhile by someone else
            except OSError as exc:
                raise self._not_writable(exc) from exc
            taken.append(command)
        return taken

    def journal(
        self,
        name: str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int | None = None,
        fsync: bool = True,
    ) -> Journal:
        """The journal D/<name>.ndjson (e.g. events, decisions, actions); opened on first append.

        Every rotated segment is kept unless `keep` bounds them (see holon.state.journal)."""
        if not _JOURNAL_NAME.fullmatch(name):
            raise InvalidInput(f"journal name {name!r} must be lower-case letters, digits, - or _")
        return Journal(
            self.directory / f"{name}.ndjson", max_bytes=max_bytes, keep=keep, fsync=fsync
        )
