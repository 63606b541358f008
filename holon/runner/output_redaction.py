"""Forwarded secrets out of every file the agent left in its output directory.

The run's output directory is uploaded for whoever reads the run (the `holon-runs-*` artifact),
and the agent's own files there (its transcript, its commands' output) quote what the model and
its commands printed: a forwarded key the agent echoed, in plain or encoded (`base64`,
percent-encoded) form, would be published with them. Every regular file is rewritten with each
form of each value replaced by the marker (`holon.secrets.Redactor`); nothing is followed (a
symlink or special file is left as it is and never read). `diff.patch` is not rewritten: a
patch holding a secret is refused whole (`outputs.collect_patch`), never published edited.
"""

from __future__ import annotations

import os
import stat

from holon.contract.layout import PATCH_FILE
from holon.fsutil import place_at
from holon.secrets import Redactor, StreamRedactor

_CHUNK = 1024 * 1024
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def _chunks(dir_fd: int, name: str) -> list[bytes] | None:
    try:
        fd = os.open(name, _OPEN | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        chunks = []
        while chunk := handle.read(_CHUNK):
            chunks.append(chunk)
        return chunks


def _redact_file(dir_fd: int, name: str, redactor: Redactor) -> int:
    chunks = _chunks(dir_fd, name)
    if chunks is None:
        return 0
    stream = StreamRedactor(redactor)
    out = [stream.feed(chunk) for chunk in chunks]
    out.append(stream.flush())
    if stream.replaced:
        mode = stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        place_at(dir_fd, name, out, mode | stat.S_IRUSR | stat.S_IWUSR)
    return stream.replaced


def redact_output_files(dir_fd: int, redactor: Redactor, *, top: bool = True) -> int:
    """Redact every regular file below `dir_fd` (not following links); how many replaced."""
    if not redactor:
        return 0
    replaced = 0
    for entry in sorted(os.listdir(dir_fd)):
        if top and entry == PATCH_FILE:
            continue
        try:
            st = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                sub = os.open(entry, _OPEN | os.O_DIRECTORY, dir_fd=dir_fd)
            except OSError:
                continue
            try:
                replaced += redact_output_files(sub, redactor, top=False)
            finally:
                os.close(sub)
        elif stat.S_ISREG(st.st_mode):
            try:
                replaced += _redact_file(dir_fd, entry, redactor)
            except OSError:
                continue
    return replaced
