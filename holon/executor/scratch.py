"""Holon's temporary directories (`holon-head-*`: a pull request's head checked out as a git
worktree; `holon-context-*`: a run's context before the runner copies it), made so that one a
killed process leaves behind is reclaimed, not leaked for the life of a long-running serve.

Each carries its owner in `.holon-owner`: the process id and, where the system tells it
(Linux's /proc), the process's start time, so a reused pid is not taken for the owner. Before
one is made (and when a run handler starts), `reclaim` removes those of the same parent whose
owner is gone: only a directory (never a link: lstat, and removal never follows one) named as
Holon names them, owned by this user, whose owner file names a process that no longer runs (or
runs with another start time). One without an owner file is left alone unless it is older than
a day (a version before owner files, or a process killed between making it and writing the
file). A head worktree reclaimed stays registered in its repository until `git worktree prune`
(the caller's: `workspace.reclaim_heads`).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import Literal

from holon.fsutil import lstat_at, remove_at, remove_tree

Prefix = Literal["holon-head-", "holon-context-"]
HEAD: Prefix = "holon-head-"
CONTEXT: Prefix = "holon-context-"
OWNER = ".holon-owner"
# tempfile.mkdtemp's names: the prefix, then 8 characters of its alphabet.
NAME = re.compile(r"holon-(?:head|context)-[a-z0-9_]{8}\Z")
OWNERLESS_AFTER = 24 * 3600.0  # seconds
_MAX_OWNER = 128
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, from /proc); None when unknown
    (no such process, or a system without /proc)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw.rpartition(b")")[2].split()
    if len(fields) < 20 or fields[0] == b"Z":  # a zombie has ended: it owns nothing
        return None
    return fields[19].decode("ascii", "replace")


def _owner_line() -> str:
    pid = os.getpid()
    return f"{pid} {start_time(pid) or '-'}\n"


def make_scratch(prefix: Prefix, parent: Path | None = None) -> Path:
    """A new directory `prefix*` in `parent` (the temporary directory by default), its owner
    (this process) recorded in it."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path / OWNER, flags, 0o600)
        try:
            os.write(fd, _owner_line().encode("ascii"))
        finally:
            os.close(fd)
    except OSError:
        remove_tree(path)
        raise
    return path


def _alive(pid: int, started: str) -> bool:
    """Whether the process that wrote an owner file (`pid`, its start time or `-`) still runs."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it runs
    except OSError:
        return True  # cannot tell: kept
    now = start_time(pid)
    if Path("/proc/self/stat").exists() and now is None:
        return False  # a zombie, or gone since
    return started == "-" or now is None or now == started


def _owner(dir_fd: int, name: str) -> tuple[int, str] | None:
    """The owner recorded in directory `name` (None: no readable owner file)."""
    try:
        fd = os.open(name, _DIR, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        owner = os.open(OWNER, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        text = os.read(owner, _MAX_OWNER).decode("ascii", "replace").split()
    finally:
        os.close(owner)
    if len(text) != 2 or not text[0].isdigit() or not 0 < int(text[0]) < 2**31:
        return None
    return int(text[0]), text[1]


def _reclaimable(dir_fd: int, name: str, now: float) -> bool:
    st = lstat_at(dir_fd, name)
    if st is None or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False  # a link, a file, someone else's: never Holon's to remove
    owner = _owner(dir_fd, name)
    if owner is None:
        return now - st.st_mtime > OWNERLESS_AFTER
    return not _alive(*owner)


def reclaim(parent: Path | None = None) -> list[str]:
    """Remove the `holon-head-*` and `holon-context-*` directories of `parent` (the temporary
    directory by default) whose owner is gone; their names. Best effort: what cannot be read
    or removed stays."""
    where = parent if parent is not None else Path(tempfile.gettempdir())
    try:
        dir_fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return []
    removed: list[str] = []
    try:
        now = time.time()
        for name in sorted(os.listdir(dir_fd)):
            if not NAME.match(name) or not _reclaimable(dir_fd, name, now):
                continue
            try:
                remove_at(dir_fd, name, reclaim=True)
            except OSError:
                continue
            removed.append(name)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
    return removed


__all__ = ["CONTEXT", "HEAD", "NAME", "OWNER", "make_scratch", "reclaim", "start_time"]
