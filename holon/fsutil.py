"""Filesystem helpers: atomic writes, so a crash leaves the old file or the new one, never half."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    atomic_write_chunks(path, (data,), mode)


def atomic_write_chunks(path: Path, chunks: Iterable[bytes], mode: int = 0o644) -> None:
    """`atomic_write_bytes` of the chunks' concatenation, written as they are: a caller with
    a large file in pieces (the serve state, megabytes) spares a copy of it in memory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.writelines(chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str, mode: int = 0o644) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


# Directory-relative helpers for directories someone else writes into (the agent's output): every
# name is looked up under an already open directory, and nothing the other side made is followed.
_NOFOLLOW_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_dir(path: Path) -> int:
    """An fd for the directory `path`; later lookups stay in it even if the path is swapped."""
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def kind_of(st: os.stat_result | None) -> str:
    """A word for what is at a path: missing, a regular file, a directory, a symlink, ..."""
    if st is None:
        return "missing"
    if stat.S_ISREG(st.st_mode):
        return "a regular file"
    if stat.S_ISDIR(st.st_mode):
        return "a directory"
    if stat.S_ISLNK(st.st_mode):
        return "a symlink"
    return "a special file"


def remove_at(dir_fd: int, name: str, *, reclaim: bool = False) -> None:
    """Remove `name` under `dir_fd` without following it (a directory goes with its contents).

    A tree of any depth or path length is removed (shutil.rmtree recurses, and fails past a
    thousand levels). With `reclaim`, a directory its owner cannot list or write (mode 000) is
    given back owner access first; without it, that is an OSError.
    """
    st = lstat_at(dir_fd, name)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        _remove_dir_at(dir_fd, name, reclaim)
    else:
        os.unlink(name, dir_fd=dir_fd)


def remove_tree(path: Path) -> None:
    """Remove the directory tree at `path`, whatever its depth, reclaiming locked directories.

    Best effort, like `shutil.rmtree(path, ignore_errors=True)`: what cannot go stays.
    """
    try:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        remove_at(parent, path.name, reclaim=True)
    except OSError:
        pass
    finally:
        os.close(parent)


_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_subdir(dir_fd: int, name: str, reclaim: bool) -> int:
    try:
        fd = os.open(name, _DIR_NOFOLLOW, dir_fd=dir_fd)
    except PermissionError:
        if not reclaim:
            raise
        # Only a directory reaches here (lstat'ed, no one else writes the tree any more).
        mode = stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        os.chmod(name, mode | stat.S_IRWXU, dir_fd=dir_fd)
        fd = os.open(name, _DIR_NOFOLLOW, dir_fd=dir_fd)
    if reclaim:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & stat.S_IRWXU != stat.S_IRWXU:
            os.fchmod(fd, mode | stat.S_IRWXU)
    return fd


def _clear_files(fd: int) -> list[str]:
    """Unlink every entry of the open directory but its subdirectories; returns their names."""
    subdirs = []
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    return subdirs


def _remove_dir_at(dir_fd: int, name: str, reclaim: bool) -> None:
    """Iterative removal: one directory open at a time, climbing back through `..`, so neither
    the depth (no recursion, no fd per level) nor the path length (every step is relative)
    bounds it. The parent reached through `..` is the one descended from: nothing else moves
    the tree once the agent is gone."""
    fd = _open_subdir(dir_fd, name, reclaim)
    try:
        stack = [(name, _clear_files(fd))]
        while stack:
            pending = stack[-1][1]
            if pending:
                child = pending.pop()
                step = _open_subdir(fd, child, reclaim)
                os.close(fd)
                fd = step
                stack.append((child, _clear_files(fd)))
                continue
            done, _ = stack.pop()
            parent = os.open("..", _DIR_NOFOLLOW, dir_fd=fd) if stack else dir_fd
            os.close(fd)
            fd = parent
            os.rmdir(done, dir_fd=fd)
    finally:
        if fd != dir_fd:
            os.close(fd)


def place_at(dir_fd: int, name: str, chunks: Iterable[bytes], mode: int = 0o644) -> int:
    """Atomically put a new regular file at `name`, replacing whatever entry is there unfollowed.

    The caller clears a directory in the way first. Returns the bytes written.
    """
    tmp = f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        mode,
        dir_fd=dir_fd,
    )
    written = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
                written += len(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    return written


def open_regular_at(dir_fd: int, relpath: str) -> int:
    """Open a regular file at `relpath` under `dir_fd`, following no symlink on the way.

    Raises FileNotFoundError when absent and NotRegular when any step is a symlink, a special file,
    or leaves the directory (absolute paths and `..` included).
    """
    parts = PurePosixPath(relpath).parts
    if not parts or PurePosixPath(relpath).is_absolute() or ".." in parts:
        raise NotRegular(f"{relpath} is outside the directory")
    current = dir_fd
    try:
        for part in parts[:-1]:
            try:
                step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
            except NotADirectoryError:
                raise NotRegular(f"{relpath}: {part} is not a directory") from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise NotRegular(f"{relpath}: {part} is a symlink") from None
                raise
            if current != dir_fd:
                os.close(current)
            current = step
        st = lstat_at(current, parts[-1])
        if st is None:
            raise FileNotFoundError(relpath)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{relpath} is {kind_of(st)}")
        fd = os.open(parts[-1], _NOFOLLOW_READ, dir_fd=current)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between the lstat and the open
            os.close(fd)
            raise NotRegular(f"{relpath} is not a regular file")
        return fd
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(f"{relpath} is a symlink") from None
        raise
    finally:
        if current != dir_fd:
            os.close(current)


def read_regular_at(dir_fd: int, relpath: str, limit: int) -> bytes:
    """The contents of a regular file (see open_regular_at); more than `limit` bytes is an error."""
    fd = open_regular_at(dir_fd, relpath)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise NotRegular(f"{relpath} is larger than {limit} bytes")
    return data


class NotRegular(OSError):
    """A path that is not a regular file reached without following anything."""


def open_regular(path: Path, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """Open a file of a directory whose contents may have been restored from elsewhere (serve's
    state, its journals and inbox): a link there is never followed, and a FIFO or device is
    refused without waiting on it. InvalidInput names the path and what is wrong."""
    from holon.errors import InvalidInput

    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidInput(f"{path} is a link; Holon never follows one here") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidInput(f"{path} is not a regular file")
    return fd
