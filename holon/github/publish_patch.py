"""The file list of a `diff.patch`: which paths it reads and writes, with modes and blob ids.

A small pure reader of git's patch format as the runner writes it (`git diff --binary
--full-index --no-renames`, docs/contract.md), strict enough to refuse what it does not
understand: the patch must start with `diff --git`, every line must belong to a header, a hunk
(counted, so a second patch cannot hide after a hunk's last line) or binary data, and a patch
that is not git's own format is refused. `git apply` still does the applying
(`publish_apply.py`); this list says what the patch declares, so the paths can be checked before
anything is fetched and compared afterwards with what git actually changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from holon.github import publish_patch_lines as read
from holon.github.errors import PublishError
from holon.github.publish_patch_lines import fail, plain

_INDEX = re.compile(rb"([0-9a-f]{7,64})\.\.([0-9a-f]{7,64})(?: ([0-7]{6}))?")
_MODE = re.compile(rb"[0-7]{6}")
_HEADER_KEYS = (
    b"old mode ",
    b"new mode ",
    b"deleted file mode ",
    b"new file mode ",
    b"rename from ",
    b"rename to ",
    b"copy from ",
    b"copy to ",
    b"similarity index ",
    b"dissimilarity index ",
    b"index ",
)


@dataclass(frozen=True)
class FileChange:
    old_path: str | None  # None: the patch creates the file
    new_path: str | None  # None: the patch deletes it
    old_mode: str | None = None
    new_mode: str | None = None
    old_sha: str | None = None  # as the index line gives it (full with --full-index)
    new_sha: str | None = None
    binary: bool = False
    copy: bool = False

    @property
    def writes(self) -> tuple[str, ...]:
        """The paths whose entry the change adds, replaces or removes."""
        if self.new_path is None:
            return (self.old_path,) if self.old_path else ()
        if self.old_path is not None and self.old_path != self.new_path and not self.copy:
            return (self.old_path, self.new_path)
        return (self.new_path,)


def parse_patch(patch: bytes, max_files: int) -> list[FileChange]:
    """The changes `patch` declares, in order; [] for an empty patch. PublishError when it is
    not git's format, changes a path twice or touches more than `max_files` files."""
    lines = patch.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    changes: list[FileChange] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith(b"diff --git "):
            raise fail(i + 1, "expected `diff --git`")
        change, i = _section(lines, i)
        changes.append(change)
        if len(changes) > max_files:
            raise PublishError(
                "too-large", f"diff.patch changes more than {max_files} files (max_files)"
            )
    seen: set[str] = set()
    for change in changes:
        for path in change.writes:
            if path in seen:
                raise PublishError("unreadable", "diff.patch changes one path twice", (path,))
            seen.add(path)
    return changes


def _section(lines: list[bytes], i: int) -> tuple[FileChange, int]:
    number = i + 1
    names = read.header_names(lines[i][len(b"diff --git ") :], number)
    fields: dict[bytes, bytes] = {}
    i += 1
    while i < len(lines):
        key = next((k for k in _HEADER_KEYS if lines[i].startswith(k)), None)
        if key is None:
            break
        if key in fields:
            raise fail(i + 1, "a repeated header line")
        fields[key] = lines[i][len(key) :]
        i += 1
    sides: tuple[str | None, str | None] | None = None
    binary = False
    if i < len(lines) and lines[i].startswith(b"--- "):
        if i + 1 >= len(lines) or not lines[i + 1].startswith(b"+++ "):
            raise fail(i + 2, "expected `+++` after `---`")
        sides = (read.side(lines[i][4:], i + 1), read.side(lines[i + 1][4:], i + 2))
        i += 2
        if i >= len(lines) or not lines[i].startswith(b"@@ "):
            raise fail(i + 1, "expected a hunk")
        while i < len(lines) and lines[i].startswith(b"@@ "):
            i = read.hunk(lines, i)
    elif i < len(lines) and lines[i] == b"GIT binary patch":
        binary = True
        i = read.binary(lines, i + 1)
    elif i < len(lines) and lines[i].startswith(b"Binary files "):
        raise fail(i + 1, "a binary change without its data (made without --binary)")
    return _change(names, sides, fields, binary, number), i


def _change(
    names: tuple[str, str] | None,
    sides: tuple[str | None, str | None] | None,
    fields: dict[bytes, bytes],
    binary: bool,
    number: int,
) -> FileChange:
    created, deleted = b"new file mode " in fields, b"deleted file mode " in fields
    moved = next((k for k in (b"rename ", b"copy ") if k + b"from " in fields), b"")
    if moved:
        if moved + b"to " not in fields or created or deleted:
            raise fail(number, "an incomplete rename or copy")
        old = plain(fields[moved + b"from "], number).decode("utf-8", "surrogateescape")
        new = plain(fields[moved + b"to "], number).decode("utf-8", "surrogateescape")
    else:
        if names is not None:
            old, new = names
        elif sides is not None and (sides[0] or sides[1]):
            old = new = sides[0] or sides[1]  # type: ignore[assignment]
        else:
            raise fail(number, "file names that cannot be told apart")
        if old != new:
            raise fail(number, "two names without a rename")
        if sides is not None and sides != (None if created else old, None if deleted else new):
            raise fail(number, "`---`/`+++` names that disagree with the header")
    index = _INDEX.fullmatch(fields.get(b"index ", b"-"))
    if b"index " in fields and index is None:
        raise fail(number, "a malformed index line")
    same = index[3] if index else None
    old_mode = fields.get(b"old mode ") or fields.get(b"deleted file mode ") or same
    new_mode = fields.get(b"new mode ") or fields.get(b"new file mode ") or same
    for mode in (old_mode, new_mode):
        if mode is not None and not _MODE.fullmatch(mode):
            raise fail(number, "a malformed mode")
    return FileChange(
        old_path=None if created else old,
        new_path=None if deleted else new,
        old_mode=old_mode.decode() if old_mode else None,
        new_mode=new_mode.decode() if new_mode else None,
        old_sha=index[1].decode() if index else None,
        new_sha=index[2].decode() if index else None,
        binary=binary,
        copy=moved == b"copy ",
    )
