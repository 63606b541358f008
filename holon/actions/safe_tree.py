"""Copying a directory another job made (a downloaded artifact) without trusting it.

Every entry is looked up under an open directory fd with `lstat` and nothing is followed: a
symlink, a device, a FIFO or a socket anywhere refuses the whole tree, and so does a name that is
absolute or `..`, a tree deeper than `MAX_DEPTH`, more than `MAX_FILES` entries, or more than
`MAX_BYTES` in all. The copy is made into a new directory the caller names, with plain modes; a
refused tree leaves nothing behind.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from holon.fsutil import kind_of, remove_tree

MAX_BYTES = 64 * 1024 * 1024
MAX_FILES = 10_000
MAX_DEPTH = 32
_CHUNK = 1024 * 1024
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """The tree is not taken; `str()` says why (a relative path and what is wrong with it)."""


@dataclass
class _Budget:
    max_bytes: int
    max_files: int
    bytes: int = 0
    files: int = 0


def copy_tree(
    source: Path, dest: Path, *, max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES
) -> int:
    """Copy the directory `source` to the new directory `dest`; the bytes copied. Refused when
    anything in it is not a plain file or directory (then `dest` does not exist)."""
    try:
        top = os.open(source, _DIR)
    except OSError as exc:
        raise Refused(f"{source.name}: not a plain directory ({exc.strerror or exc})") from None
    budget = _Budget(max_bytes, max_files)
    dest.mkdir(mode=0o755)
    try:
        _copy_dir(top, dest, "", 0, budget)
    except BaseException:
        remove_tree(dest)
        raise
    finally:
        os.close(top)
    return budget.bytes


def _copy_dir(fd: int, dest: Path, where: str, depth: int, budget: _Budget) -> None:
    if depth > MAX_DEPTH:
        raise Refused(f"{where or '.'}: deeper than {MAX_DEPTH} directories")
    for name in sorted(os.listdir(fd)):
        shown = f"{where}{name}"
        if name in ("", ".", "..") or "/" in name or "\0" in name:
            raise Refused(f"{shown!r}: not a plain name")
        budget.files += 1
        if budget.files > budget.max_files:
            raise Refused(f"more than {budget.max_files} entries")
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            child = os.open(name, _DIR, dir_fd=fd)
            try:
                (dest / name).mkdir(mode=0o755)
                _copy_dir(child, dest / name, f"{shown}/", depth + 1, budget)
            finally:
                os.close(child)
        elif stat.S_ISREG(st.st_mode):
            _copy_file(fd, name, dest / name, shown, budget)
        else:
            raise Refused(f"{shown}: {kind_of(st)}; only plain files and directories are taken")


def _copy_file(fd: int, name: str, target: Path, shown: str, budget: _Budget) -> None:
    try:
        src = os.open(name, _READ, dir_fd=fd)
    except OSError as exc:
        raise Refused(f"{shown}: not readable as a plain file ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):  # swapped since the lstat
            raise Refused(f"{shown}: not a regular file")
        out = os.open(target, _WRITE, 0o644)
        with os.fdopen(out, "wb") as handle:
            while chunk := os.read(src, _CHUNK):
                budget.bytes += len(chunk)
                if budget.bytes > budget.max_bytes:
                    raise Refused(f"more than {budget.max_bytes // (1024 * 1024)} MiB in all")
                handle.write(chunk)
    finally:
        os.close(src)


__all__ = ["MAX_BYTES", "MAX_FILES", "Refused", "copy_tree"]
