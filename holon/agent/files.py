"""Writing the agent's own files into a directory the model's shell can also write into.

Every file is put in place whole (a temporary name, then a rename over the final one), and
whatever the model left at the name is replaced, never written through: a link stays unfollowed,
a directory is removed first.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid

from holon.fsutil import lstat_at, remove_at

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def replace_at(dir_fd: int, name: str, data: bytes, *, sync: bool = True) -> None:
    """Put `data` at `name` under `dir_fd` atomically, replacing whatever entry is there."""
    tmp = f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    fd = os.open(tmp, _CREATE, 0o644, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        st = lstat_at(dir_fd, name)
        if st is not None and stat.S_ISDIR(st.st_mode):
            remove_at(dir_fd, name)  # rename() replaces a file or a link, not a directory
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def open_dir(path: str | os.PathLike[str]) -> int:
    """An fd for a directory the agent was given (the output), made when it does not exist."""
    os.makedirs(path, exist_ok=True)
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
