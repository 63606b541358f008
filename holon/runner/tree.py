"""The git tree Holon records of a work tree: every directory below the top is plain files.

A directory holding a `.git` entry (a nested repository from `git init`, a submodule checkout, a
`.git` file naming any git directory) would make `git add` record a gitlink, or fail, and open the
git directory that entry names: a host path of the agent's choosing. Such directories are kept out
of git's own walk; their files are listed here without following links, skipping every `.git`
entry, and added one by one, so their content is carried in the patch like any other file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from holon.runner.git import git

GIT_ENTRY = ".git"

# Copies keep size and mtime but not inode or ctime: comparing only those lets git skip re-reading
# every unchanged file.
_STAT = ("-c", "core.checkStat=minimal", "-c", "core.trustctime=false")


def nested_repositories(top: Path) -> list[bytes]:
    """Directories below `top` that hold a `.git` entry, relative to `top`, outermost only."""
    found: list[bytes] = []
    root = os.fsencode(top)
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath != root and (GIT_ENTRY.encode() in dirnames or GIT_ENTRY.encode() in filenames):
            found.append(os.path.relpath(dirpath, root))
            dirnames.clear()  # files below are walked again when the tree is written
            continue
        if GIT_ENTRY.encode() in dirnames:
            dirnames.remove(GIT_ENTRY.encode())
    return sorted(found)


def _files_below(top: Path, rel: bytes) -> list[bytes]:
    """Files and links under `top/rel`, never following a link and never entering `.git`."""
    names: list[bytes] = []
    root = os.fsencode(top)
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, rel)):
        # os.walk lists a link to a directory with the directories but does not enter it.
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = [d for d in dirnames if d != GIT_ENTRY.encode() and d not in links]
        for name in filenames + links:
            if name != GIT_ENTRY.encode():
                names.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(names)


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


def write_tree(work_tree: Path, env: Mapping[str, str], *, force: bool, nested: list[bytes]) -> str:
    """Update the index in `env` from `work_tree` and write its tree; returns the tree id.

    `nested` names the directories to record file by file (see the module docstring).
    """
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
    files = [name for rel in nested for name in _files_below(work_tree, rel)]
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
    return git([*_STAT, "write-tree"], cwd=work_tree, env=env).decode().strip()
