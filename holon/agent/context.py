"""The run's context directory as the prompt shows it: what is there, and the text of each file as
delimited, cleaned, bounded untrusted data.

Everything under `<input>/context/` came from outside (issue bodies, comments, diffs, logs): it is
shown to the model as data, never as instructions. Each file's text has hidden characters removed
(`holon.markdown.clean`), HTML comments stripped (people reading it on GitHub never see them; a
patch keeps them, they are code there) and any delimiter it carries neutralised, so nothing in it
can end its block or open another. Nothing is followed: a link is listed as a link, never read.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holon.errors import InvalidInput
from holon.fsutil import open_regular_at, read_regular_at
from holon.jsonio import load_object
from holon.markdown import clean

CONTEXT_MANIFEST = "manifest.json"
DELIMITER = "untrusted-data"
MAX_FILES = 500  # listed
MAX_DEPTH = 8
MAX_FILE_TEXT = 24 * 1024  # characters of one file shown inline
MAX_TOTAL_TEXT = 192 * 1024  # characters of all files shown inline
MAX_MANIFEST = 1024 * 1024
MAX_ENTRIES = 200  # present/missing entries of the context manifest shown
# Shown first, in this order: what the run is about before what surrounds it.
FIRST = ("issue.md", "pull_request.md", "comments.json", "review_threads.json", "files.json")
CODE_SUFFIXES = (".patch", ".diff")

_COMMENT = re.compile(r"<!--.*?(-->|\Z)", re.DOTALL)
_DELIMITER = re.compile(r"<(\s*/?\s*" + DELIMITER + ")", re.IGNORECASE)
_UNSAFE_SOURCE = re.compile(r"[^A-Za-z0-9._/-]")


@dataclass(frozen=True)
class ContextFile:
    path: str  # relative to the context directory, shown as-is (cleaned)
    size: int | None  # None: not a regular file
    kind: str = "file"  # file | link | special | directory (only one too deep to list)


@dataclass(frozen=True)
class DataBlock:
    source: str  # e.g. context/issue.md; safe to put in the delimiter's attribute
    text: str
    cut: bool  # only the head is shown
    size: int


@dataclass(frozen=True)
class ManifestPart:
    name: str
    detail: str  # a path and size, or why it is missing


@dataclass(frozen=True)
class RunContext:
    files: list[ContextFile]
    more_files: int  # listed beyond MAX_FILES
    blocks: list[DataBlock]
    left_out: list[str]  # files not shown inline (binary, over the total budget)
    present: list[ManifestPart]
    missing: list[ManifestPart]
    manifest_problem: str | None


def neutralise(text: str, *, code: bool = False) -> str:
    """Untrusted text made safe to put inside a data block."""
    text = clean(text)
    if not code:
        text = _COMMENT.sub("", text)
    return _DELIMITER.sub(r"&lt;\1", text)


def _walk(root: Path) -> tuple[list[ContextFile], int]:
    """Every entry under `root`, files sorted, no link followed, iteratively (no recursion)."""
    found: list[ContextFile] = []
    extra = 0
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel, depth = stack.pop()
        try:
            with os.scandir(root / rel if rel else root) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 < MAX_DEPTH:
                    stack.append((path, depth + 1))
                elif len(found) < MAX_FILES:
                    found.append(ContextFile(path, None, "directory"))
                continue
            if len(found) >= MAX_FILES:
                extra += 1
                continue
            if stat.S_ISREG(st.st_mode):
                found.append(ContextFile(path, st.st_size))
            elif stat.S_ISLNK(st.st_mode):
                found.append(ContextFile(path, None, "link"))
            else:
                found.append(ContextFile(path, None, "special"))
    found.sort(
        key=lambda f: (f.path not in FIRST, FIRST.index(f.path) if f.path in FIRST else 0, f.path)
    )
    return found, extra


def _read_head(root: Path, rel: str, limit: int) -> tuple[str, int] | None:
    """The text of the first `limit` bytes of a file and the file's size; None if not text."""
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = open_regular_at(dir_fd, rel)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        raw = handle.read(limit)
    if b"\x00" in raw[:8192]:
        return None  # binary: listed, not shown
    return raw.decode("utf-8", errors="replace"), size


def _blocks(root: Path, files: list[ContextFile]) -> tuple[list[DataBlock], list[str]]:
    blocks: list[DataBlock] = []
    left_out: list[str] = []
    budget = MAX_TOTAL_TEXT
    for item in files:
        if item.kind != "file" or item.path == CONTEXT_MANIFEST or item.size is None:
            continue
        limit = min(MAX_FILE_TEXT, budget)
        read = _read_head(root, item.path, limit) if limit > 0 else None
        if read is None:
            left_out.append(item.path)
            continue
        text, size = read
        shown = neutralise(text, code=item.path.endswith(CODE_SUFFIXES))
        budget -= len(text)
        source = _UNSAFE_SOURCE.sub("_", clean(f"context/{item.path}"))
        blocks.append(DataBlock(source, shown, size > limit, size))
    return blocks, left_out


def _parts(value: Any, detail_of: str) -> list[ManifestPart]:
    parts: list[ManifestPart] = []
    if not isinstance(value, list):
        return parts
    for entry in value[:MAX_ENTRIES]:
        if not isinstance(entry, dict):
            continue
        name = " ".join(clean(str(entry.get("name", "?"))).split())[:100]
        if detail_of == "present":
            detail = f"{clean(str(entry.get('path', '')))} ({entry.get('bytes', '?')} bytes)"
        else:
            detail = clean(str(entry.get("reason", "")))
        parts.append(ManifestPart(name, " ".join(detail.split())[:300]))
    return parts


def read_context(root: Path) -> RunContext:
    """What the context directory at `root` holds (empty when there is none)."""
    st = None
    with contextlib.suppress(OSError):
        st = root.lstat()
    if st is None or not stat.S_ISDIR(st.st_mode):
        return RunContext([], 0, [], [], [], [], None)
    files, extra = _walk(root)
    blocks, left_out = _blocks(root, files)
    present: list[ManifestPart] = []
    missing: list[ManifestPart] = []
    problem = None
    if any(f.path == CONTEXT_MANIFEST and f.kind == "file" for f in files):
        try:
            dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                raw = read_regular_at(dir_fd, CONTEXT_MANIFEST, MAX_MANIFEST)
            finally:
                os.close(dir_fd)
            data = load_object(raw, "context/manifest.json")
            present = _parts(data.get("present"), "present")
            missing = _parts(data.get("missing"), "missing")
        except (OSError, InvalidInput) as exc:
            problem = " ".join(clean(str(exc)).split())[:300]
    return RunContext(files, extra, blocks, left_out, present, missing, problem)
