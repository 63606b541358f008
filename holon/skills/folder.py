"""A skill folder read as files: regular files and directories only, bounded, no link followed.

A skill folder may come from the repository being worked on (`.holon/config.yaml`), which is not
Holon's code: a symlink in it could hand the agent (or Holon's schema reader) any file of the host.
So the folder is read once, here, under directory fds opened with O_NOFOLLOW; a symlink, a FIFO
or a device anywhere in it is refused, and so is a folder past the bounds. What Holon validates
and what the agent receives are these same bytes.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from holon.errors import InvalidInput

MAX_FILES = 256
MAX_BYTES = 4 * 1024 * 1024  # all files of one skill together
MAX_DEPTH = 8
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class SkillFiles:
    """Every regular file of one skill folder by its folder-relative POSIX path."""

    root: Path
    files: dict[str, bytes]
    directories: tuple[str, ...]  # folder-relative, parents before children

    def text(self, relpath: str) -> str | None:
        raw = self.files.get(relpath)
        return None if raw is None else raw.decode("utf-8", "replace")


def _open_dir(path: str | Path, dir_fd: int | None, shown: str) -> int:
    try:
        return os.open(path, _DIR, dir_fd=dir_fd)
    except FileNotFoundError:
        raise InvalidInput(f"skill folder not found: {shown}") from None
    except NotADirectoryError:
        raise InvalidInput(f"{shown} is not a directory") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidInput(f"{shown} is a symlink; a skill folder holds no link") from None
        raise InvalidInput(f"cannot read {shown}: {exc.strerror or exc}") from None


def _read_file(name: str, dir_fd: int, shown: str, budget: int) -> bytes:
    try:
        fd = os.open(name, _FILE, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidInput(f"{shown} is a symlink; a skill folder holds no link") from None
        raise InvalidInput(f"cannot read {shown}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InvalidInput(f"{shown} is not a regular file")
        data = handle.read(budget + 1)
    if len(data) > budget:
        raise InvalidInput(f"{shown}: the skill folder is larger than {MAX_BYTES} bytes")
    return data


def read_folder(root: Path) -> SkillFiles:
    """All of the folder at `root` (which itself may be reached through links the caller chose;
    nothing inside it is). InvalidInput, one line, names the first entry refused."""
    files: dict[str, bytes] = {}
    directories: list[str] = []
    used = 0
    top = _open_dir(root, None, str(root))
    stack: list[tuple[int, PurePosixPath]] = [(top, PurePosixPath())]
    try:
        while stack:
            fd, rel = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    names = sorted(entry.name for entry in entries)
                for name in names:
                    child = rel / name
                    shown = str(root / child)
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        if len(child.parts) >= MAX_DEPTH:
                            raise InvalidInput(f"{shown}: nested deeper than {MAX_DEPTH} levels")
                        directories.append(child.as_posix())
                        stack.append((_open_dir(name, fd, shown), child))
                    elif stat.S_ISREG(st.st_mode):
                        if len(files) >= MAX_FILES:
                            raise InvalidInput(f"{root}: more than {MAX_FILES} files in one skill")
                        data = _read_file(name, fd, shown, MAX_BYTES - used)
                        used += len(data)
                        files[child.as_posix()] = data
                    elif stat.S_ISLNK(st.st_mode):
                        raise InvalidInput(f"{shown} is a symlink; a skill folder holds no link")
                    else:
                        raise InvalidInput(f"{shown} is not a regular file or directory")
            finally:
                os.close(fd)
    finally:
        for fd, _ in stack:
            os.close(fd)
    return SkillFiles(root=root, files=files, directories=tuple(sorted(directories)))
