"""The `view` and `edit` tools over the sandbox (holon.agent.paths): bounded reads, exact edits.

`view` shows a text file with line numbers (a range of it, within a byte cap, long lines cut) or
lists a directory. `edit` replaces one exact string that must occur exactly once, or creates a
new file when the old string is empty; the file is replaced atomically, its mode kept. Every
open is relative to a directory held open and never follows a link (O_NOFOLLOW), and a FIFO or
device is refused without waiting on it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import BinaryIO

from holon.agent.paths import PathRefused, Sandbox, Target
from holon.fsutil import kind_of, lstat_at, place_at

EDIT_LIMIT = 4 * 1024 * 1024  # bytes of a file edit reads and writes
MAX_LINE = 2000  # characters of one line view shows
MAX_ENTRIES = 1000  # directory entries view lists
_SNIFF = 8192
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class ToolFailed(Exception):
    """The tool could not do what was asked; the message is for the model (one line)."""


def view(sandbox: Sandbox, raw: str, start: int | None, end: int | None, cap: int) -> str:
    if start is not None and start < 1:
        raise ToolFailed("start_line counts from 1")
    if start is not None and end is not None and end < start:
        raise ToolFailed("end_line is before start_line")
    with sandbox.resolve(raw) as target:
        if target.st is None:
            raise ToolFailed(f"{raw}: no such file or directory")
        if stat.S_ISDIR(target.st.st_mode):
            return _list(target, cap)
        fd = _open_regular(target)
        with os.fdopen(fd, "rb") as handle:
            head = handle.read(_SNIFF)
            if b"\0" in head:
                size = os.fstat(handle.fileno()).st_size
                return f"{target.shown} is a binary file ({size} bytes); not shown"
            handle.seek(0)
            return _numbered(target.shown, handle, start or 1, end, cap)


def _numbered(shown: str, handle: BinaryIO, start: int, end: int | None, cap: int) -> str:
    readline = handle.readline
    lines: list[str] = []
    used = 0
    number = 0
    more = False
    while True:
        line, complete = _line(readline)
        if line is None:
            break
        number += 1
        if number < start:
            continue
        if (end is not None and number > end) or used >= cap:
            more = True
            break
        text = line.decode("utf-8", "replace").rstrip("\n")
        if not complete or len(text) > MAX_LINE:
            text = text[:MAX_LINE] + " [... line cut ...]"
        rendered = f"{number:6}\t{text}"
        if used + len(rendered) + 1 > cap and lines:
            more = True
            number -= 1
            break
        lines.append(rendered)
        used += len(rendered) + 1
    if number < start and not lines:
        return f"{shown} has {number} lines; start_line {start} is past the end"
    first = start
    last = start + len(lines) - 1
    header = f"{shown} (lines {first}-{last})" if lines else f"{shown} (empty)"
    if more:
        tail = f"[the file goes on: view it with start_line={last + 1}]"
        return "\n".join([header, *lines, tail])
    return "\n".join([header, *lines])


def _line(readline: Callable[[int], bytes]) -> tuple[bytes | None, bool]:
    """One line, at most a few times MAX_LINE bytes of it kept; (None, _) at the end of file."""
    keep = MAX_LINE * 4
    first = readline(keep)
    if not first:
        return None, True
    if first.endswith(b"\n") or len(first) < keep:
        return first, True
    while True:  # skip the rest of an overlong line without holding it
        rest = readline(keep)
        if not rest or rest.endswith(b"\n"):
            return first, False


def _list(target: Target, cap: int) -> str:
    fd = os.open(
        target.name,
        os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
        dir_fd=target.parent_fd,
    )
    names: list[str] = []
    more = False
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if len(names) >= MAX_ENTRIES:
                    more = True
                    break
                names.append(entry.name)
        rows = []
        for name in sorted(names):
            st = lstat_at(fd, name)
            if st is not None and stat.S_ISDIR(st.st_mode):
                rows.append(f"{name}/")
            elif st is not None and stat.S_ISLNK(st.st_mode):
                rows.append(f"{name}@")
            elif st is not None and stat.S_ISREG(st.st_mode):
                rows.append(f"{name}  ({st.st_size} bytes)")
            else:
                rows.append(f"{name}  ({kind_of(st)})")
    finally:
        os.close(fd)
    count = f"{len(names)}{'+' if more else ''} {'entry' if len(names) == 1 else 'entries'}"
    header = f"{target.shown}/ ({count})"
    text = "\n".join([header, *rows])
    if len(text) > cap:
        text = text[:cap] + "\n[... listing cut ...]"
    elif more:
        text += f"\n[... more than {MAX_ENTRIES} entries; list it with the shell ...]"
    return text


def _open_regular(target: Target) -> int:
    if target.st is None or not stat.S_ISREG(target.st.st_mode):
        raise ToolFailed(f"{target.shown} is {kind_of(target.st)}, not a file")
    try:
        fd = os.open(target.name, _READ_FLAGS, dir_fd=target.parent_fd)
    except OSError as exc:
        raise ToolFailed(f"{target.shown}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped after the lstat
        os.close(fd)
        raise ToolFailed(f"{target.shown} is not a regular file")
    os.set_blocking(fd, True)
    return fd


def edit(sandbox: Sandbox, raw: str, old: str, new: str) -> str:
    """Replace `old` (exactly once) by `new` in the file, or create it when `old` is empty."""
    if old == "":
        return _create(sandbox, raw, new)
    if old == new:
        raise ToolFailed("old and new are the same; nothing to change")
    with sandbox.resolve(raw, writing=True) as target:
        if target.st is None:
            raise ToolFailed(f"{raw}: no such file (an empty old creates one)")
        fd = _open_regular(target)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(EDIT_LIMIT + 1)
            before = os.fstat(handle.fileno())
            mode = stat.S_IMODE(before.st_mode)
        if len(data) > EDIT_LIMIT:
            raise ToolFailed(
                f"{target.shown} is larger than {EDIT_LIMIT} bytes; edit it with the shell"
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailed(f"{target.shown} is not UTF-8 text; edit it with the shell") from None
        count = text.count(old)
        if count == 0:
            raise ToolFailed(
                f"old was not found in {target.shown}; view the file and copy it exactly"
            )
        if count > 1:
            raise ToolFailed(
                f"old matches {count} times in {target.shown}; include more context so it "
                "matches exactly once"
            )
        at = text.index(old)
        updated = text[:at] + new + text[at + len(old) :]
        encoded = updated.encode("utf-8")
        if len(encoded) > EDIT_LIMIT:
            raise ToolFailed(f"the edited file would be larger than {EDIT_LIMIT} bytes")
        place_at(target.parent_fd, target.name, [encoded], mode)
        _newer_than(target, before)
        first = text.count("\n", 0, at) + 1
        last = first + new.count("\n")
        return f"edited {target.shown}: replaced 1 occurrence (now lines {first}-{last})"


def _newer_than(target: Target, before: os.stat_result) -> None:
    """Give the edited file a modification time in a later second than the old one's: caches
    keyed on whole-second mtime and size (Python's .pyc files, make) would otherwise keep using
    what they built from the old text when a same-size edit lands within the same second."""
    after = lstat_at(target.parent_fd, target.name)
    if after is not None and int(after.st_mtime) <= int(before.st_mtime):
        later = (int(before.st_mtime) + 1) * 1_000_000_000
        os.utime(
            target.name,
            ns=(after.st_atime_ns, later),
            dir_fd=target.parent_fd,
            follow_symlinks=False,
        )


def _create(sandbox: Sandbox, raw: str, content: str) -> str:
    encoded = content.encode("utf-8")
    if len(encoded) > EDIT_LIMIT:
        raise ToolFailed(f"new is larger than {EDIT_LIMIT} bytes; write it with the shell")
    with sandbox.resolve(raw, follow_last=False, make_parents=True, writing=True) as target:
        if target.st is not None:
            raise ToolFailed(
                f"{target.shown} already exists ({kind_of(target.st)}); give old to edit it"
            )
        try:
            fd = os.open(
                target.name,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o644,
                dir_fd=target.parent_fd,
            )
        except FileExistsError:
            raise ToolFailed(f"{target.shown} already exists; give old to edit it") from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(encoded)
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        return f"created {target.shown} ({lines} lines, {len(encoded)} bytes)"


__all__ = ["EDIT_LIMIT", "PathRefused", "ToolFailed", "edit", "view"]
