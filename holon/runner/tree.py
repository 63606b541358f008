"""The git tree Holon records of a work tree: every directory below the top is plain files.

A directory holding a `.git` entry (a nested repository from `git init`, a submodule checkout, a
`.git` file naming any git directory) would make `git add` record a gitlink, or fail, and open the
git directory that entry names: a host path of the agent's choosing. Such directories are kept out
of git's own walk; their files are listed here without following links, skipping every `.git`
entry, and added one by one, so their content is carried in the patch like any other file.

Special files (FIFOs, sockets, devices) have no content a patch can carry: git's own walk skips
them, and so does the listing here, wherever they are in the tree.

The tree is walked here without recursion and with every directory opened relative to the top, so
no depth the agent builds can crash the walk. What git would drop without failing is refused
instead (`TreeError`): an entry whose path from the top is longer than git can `lstat` (git warns
and leaves it out, with everything below it) and a directory that cannot be read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from holon.errors import OperationalError
from holon.runner.git import git

GIT_ENTRY = ".git"
_GIT_ENTRY = GIT_ENTRY.encode()

# Git reaches every entry by its path from the top of the work tree; from this length on (Linux's
# PATH_MAX, the terminating NUL included) it cannot.
PATH_MAX = 4096

# Copies keep size and mtime but not inode or ctime: comparing only those lets git skip re-reading
# every unchanged file.
_STAT = ("-c", "core.checkStat=minimal", "-c", "core.trustctime=false")

_TOO_LONG = f"is longer than git can record (at most {PATH_MAX - 1} bytes)"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class TreeError(OperationalError):
    """The work tree holds something git would silently leave out of the tree."""


@dataclass
class _Scan:
    nested: list[bytes] = field(default_factory=list)  # directories holding a `.git` entry
    files: list[bytes] = field(default_factory=list)  # regular files and symlinks
    unrecordable: list[tuple[bytes, str]] = field(default_factory=list)  # (path, why)


def _join(rel: bytes, name: bytes) -> bytes:
    return rel + b"/" + name if rel else name


def _is_empty(dir_fd: int, name: bytes) -> bool:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        with os.scandir(fd) as entries:
            return next(entries, None) is None
    finally:
        os.close(fd)


def _scan(top: Path, start: bytes, *, inside_nested: bool) -> _Scan:
    """Walk `top/start` without following links.

    Outside a nested directory (`inside_nested` false) it finds the nested directories (not
    entered) and skips only the top's `.git`; inside one it lists the files and links, skipping
    every `.git` entry. Both record what git could not: paths too long, unreadable directories.
    """
    scan = _Scan()
    root_fd = os.open(top, _DIR_FLAGS)
    try:
        stack = [start]
        while stack:
            rel = stack.pop()
            try:
                fd = os.open(rel or b".", _DIR_FLAGS, dir_fd=root_fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                scan.unrecordable.append((rel, f"cannot be read ({exc.strerror})"))
                continue
            try:
                _scan_dir(
                    fd,
                    rel,
                    stack,
                    scan,
                    skip_git=inside_nested or rel == start,
                    list_files=inside_nested,
                )
            except OSError as exc:
                scan.unrecordable.append((rel, f"cannot be read ({exc.strerror})"))
            finally:
                os.close(fd)
    finally:
        os.close(root_fd)
    return scan


def _scan_dir(
    fd: int, rel: bytes, stack: list[bytes], scan: _Scan, *, skip_git: bool, list_files: bool
) -> None:
    with os.scandir(fd) as it:
        entries = [(os.fsencode(entry.name), entry) for entry in it]
    if not skip_git and any(name == _GIT_ENTRY for name, _ in entries):
        scan.nested.append(rel)  # not entered: its files are listed when the tree is written
        return
    for name, entry in entries:
        if name == _GIT_ENTRY:
            continue
        path = _join(rel, name)
        is_dir = entry.is_dir(follow_symlinks=False)
        if len(path) >= PATH_MAX:
            if not (is_dir and _is_empty(fd, name)):
                scan.unrecordable.append((path, _TOO_LONG))
        elif is_dir:
            stack.append(path)
        elif list_files and (entry.is_symlink() or entry.is_file(follow_symlinks=False)):
            scan.files.append(path)


def nested_repositories(top: Path) -> list[bytes]:
    """Directories below `top` that hold a `.git` entry, relative to `top`, outermost only."""
    return sorted(_scan(top, b"", inside_nested=False).nested)


def _ignored(work_tree: Path, env: Mapping[str, str], paths: list[bytes]) -> list[bytes]:
    if not paths:
        return []
    out = git(
        ["check-ignore", "-z", "--stdin"],
        cwd=work_tree,
        env=env,
        input=b"\0".join(paths) + b"\0",
        check=False,  # exit 1: nothing is ignored
    )
    return [name for name in out.split(b"\0") if name]


def _check(
    work_tree: Path, env: Mapping[str, str], force: bool, unrecordable: list[tuple[bytes, str]]
) -> None:
    """Raise TreeError for what git left out, unless it is ignored anyway."""
    if unrecordable and not force:
        dropped = set(_ignored(work_tree, env, [path for path, _ in unrecordable]))
        unrecordable = [entry for entry in unrecordable if entry[0] not in dropped]
    if not unrecordable:
        return
    path, why = min(unrecordable)
    shown = os.fsdecode(path)
    if len(shown) > 80:
        shown = f"{shown[:40]}...{shown[-30:]} ({len(path)} bytes)"
    more = f" and {len(unrecordable) - 1} more" if len(unrecordable) > 1 else ""
    raise TreeError(f"{shown} {why}{more}")


def write_tree(
    work_tree: Path, env: Mapping[str, str], *, force: bool, nested: list[bytes] | None = None
) -> str:
    """Update the index in `env` from `work_tree` and write its tree; returns the tree id.

    `nested` names the directories to record file by file (see the module docstring); when None,
    the whole tree is walked to find them, and what git would leave out silently raises
    TreeError (ignored entries excepted, unless `force`).
    """
    unrecordable: list[tuple[bytes, str]] = []
    if nested is None:
        scan = _scan(work_tree, b"", inside_nested=False)
        nested, unrecordable = sorted(scan.nested), scan.unrecordable
    add = [*_STAT, "add", "--all", "--ignore-errors"]
    if force:
        add.append("--force")
    else:
        # An ignored one is skipped by git's walk anyway, and naming it, even to exclude it,
        # makes `git add` fail.
        ignored = set(_ignored(work_tree, env, nested))
        nested = [rel for rel in nested if rel not in ignored]
    if not nested:
        git([*add, "--", "."], cwd=work_tree, env=env)
        _check(work_tree, env, force, unrecordable)
        return git([*_STAT, "write-tree"], cwd=work_tree, env=env).decode().strip()

    # Index entries under a nested directory (a gitlink, or files of the last pass) go first, so
    # what is there now is all that remains.
    prefixes = tuple(p + b"/" for p in nested)
    listed = git(["ls-files", "-z", "--cached"], cwd=work_tree, env=env).split(b"\0")
    tops = set(nested)
    stale = [name for name in listed if name in tops or name.startswith(prefixes)]
    if stale:
        git(
            ["update-index", "--force-remove", "-z", "--stdin"],
            cwd=work_tree,
            env=env,
            input=b"\0".join(stale) + b"\0",
        )
    excluded = b"".join(b":(exclude,literal)" + p + b"\0" for p in nested)
    git(
        [*add, "--pathspec-from-file=-", "--pathspec-file-nul"],
        cwd=work_tree,
        env=env,
        input=b".\0" + excluded,
    )
    files: list[bytes] = []
    for rel in nested:
        scan = _scan(work_tree, rel, inside_nested=True)
        files.extend(sorted(scan.files))
        unrecordable.extend(scan.unrecordable)
    if files and not force:
        dropped = set(_ignored(work_tree, env, files))
        files = [name for name in files if name not in dropped]
    if files:
        git(
            [*_STAT, "update-index", "--add", "-z", "--stdin"],
            cwd=work_tree,
            env=env,
            input=b"\0".join(files) + b"\0",
        )
    _check(work_tree, env, force, unrecordable)
    return git([*_STAT, "write-tree"], cwd=work_tree, env=env).decode().strip()
