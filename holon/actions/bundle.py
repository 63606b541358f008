"""A state bundle on disk: its layout, its safe extraction from a zip or a restored directory, its
validation, and writing one atomically.

Layout (flat, nothing else): `state.json` (a `ServeState`, as `StateStore.save` writes it) and
journals `<name>.ndjson` (one compact JSON entry a line, as `holon.state.journal` writes them;
rotated segments `<name>.ndjson.<n>` are read too). A bundle comes from outside (an artifact any
trusted run uploaded, a cache entry), so nothing in it is followed or trusted: a zip entry that
is a symlink (its mode in `external_attr`), a device, absolute, with a `..` part, a backslash or
a directory part, a duplicate, a name outside the layout, more than `MAX_ENTRIES` entries, more
than `MAX_UNPACKED` bytes unpacked, or an entry packed tighter than `MAX_RATIO`:1 is refused
before anything is written; files are written with O_NOFOLLOW | O_EXCL into a fresh directory and
counted as they are written. The state file is then read by the store's own reader (size,
depth, schema) and each journal by the journal's own reader (every line but a torn last one a
JSON object with a string id), plus a non-empty id (the merge needs one).
"""

from __future__ import annotations

import io
import lzma
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from holon.errors import InvalidInput
from holon.fsutil import open_dir, open_regular_at
from holon.state.journal import Journal
from holon.state.model import ServeState
from holon.state.store import STATE, StateStore

MAX_ENTRIES = 1000
MAX_UNPACKED = 64 * 1024 * 1024
MAX_RATIO = 20
# Below this an entry cannot be a bomb whatever its ratio (the total is bounded anyway), and a
# small journal of near-identical lines legitimately packs tighter than 20:1.
RATIO_FLOOR = 1024 * 1024
_JOURNAL_FILE = re.compile(r"([a-z][a-z0-9_-]*)\.ndjson(?:\.[1-9][0-9]{0,5})?")
_CHUNK = 1024 * 1024
# The store's message advises an operator about a path of its own; here only the problem counts.
_UNUSABLE = re.compile(r"is unusable \((.*)\); it was left untouched")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class BundleRefused(InvalidInput):
    """A bundle that is not one Holon wrote: one line saying why."""


@dataclass
class Bundle:
    state: ServeState
    journals: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _size(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else f"{limit} bytes"


def journal_of(name: str) -> str | None:
    """The journal a file of the layout belongs to (`events` for `events.ndjson.2`), or None."""
    found = _JOURNAL_FILE.fullmatch(name)
    return found.group(1) if found else None


def in_layout(name: str) -> bool:
    return name == STATE or journal_of(name) is not None


def _checked_name(name: str) -> str:
    if "\\" in name or "\0" in name:
        raise BundleRefused(f"entry {name[:80]!r}: a backslash or NUL in its name")
    path = PurePosixPath(name)
    if path.is_absolute() or re.match(r"[A-Za-z]:", name):
        raise BundleRefused(f"entry {name[:80]!r}: an absolute name")
    if ".." in path.parts:
        raise BundleRefused(f"entry {name[:80]!r}: a '..' in its name")
    if len(path.parts) != 1 or not in_layout(name):
        raise BundleRefused(f"entry {name[:80]!r}: not a file of a state bundle")
    return name


def _check_zip(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise BundleRefused(f"{len(infos)} entries, over the limit of {MAX_ENTRIES}")
    seen: set[str] = set()
    total = 0
    files: list[zipfile.ZipInfo] = []
    for info in infos:
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if stat.S_ISLNK(mode):
            raise BundleRefused(f"entry {info.filename[:80]!r}: a symlink")
        if info.is_dir():
            raise BundleRefused(f"entry {info.filename[:80]!r}: a directory")
        if kind and not stat.S_ISREG(mode):
            raise BundleRefused(f"entry {info.filename[:80]!r}: not a regular file")
        name = _checked_name(info.filename)
        if name in seen:
            raise BundleRefused(f"entry {name!r} appears twice")
        seen.add(name)
        total += info.file_size
        if total > MAX_UNPACKED:
            raise BundleRefused(f"over {_size(MAX_UNPACKED)} unpacked")
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise BundleRefused(f"entry {name!r} packed tighter than {MAX_RATIO}:1")
        files.append(info)
    return files


def _write_new(dest: Path, name: str, chunks: Iterable[bytes], budget: int) -> int:
    """Write a new file `name` in `dest` (never through a link); its size, bounded by `budget`."""
    fd = os.open(dest / name, _CREATE, 0o600)
    written = 0
    with os.fdopen(fd, "wb") as handle:
        for chunk in chunks:
            written += len(chunk)
            if written > budget:
                raise BundleRefused(f"over {_size(MAX_UNPACKED)} unpacked")
            handle.write(chunk)
    return written


def _reading(handle: IO[bytes]) -> Iterable[bytes]:
    while chunk := handle.read(_CHUNK):
        yield chunk


def extract_zip(data: bytes, dest: Path) -> None:
    """Unpack the zip `data` into the fresh, empty directory `dest`; BundleRefused if unsafe."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            budget = MAX_UNPACKED
            for info in _check_zip(archive):
                # The declared size is a claim: what is written is counted too.
                with archive.open(info) as member:
                    budget -= _write_new(dest, info.filename, _reading(member), budget)
    except BundleRefused:
        raise
    # What zipfile and its decompressors raise on a damaged archive: a bad header or CRC, a
    # truncated or corrupt stream (zlib, lzma; bz2 raises OSError), an encrypted entry.
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        EOFError,
        NotImplementedError,
        ValueError,
        RuntimeError,
        zlib.error,
        lzma.LZMAError,
        OSError,
    ) as exc:
        raise BundleRefused(f"not a readable zip ({type(exc).__name__})") from None


def copy_dir(source: Path, dest: Path) -> bool:
    """Copy a restored bundle directory (a cache entry) into the fresh directory `dest` under
    the same rules as a zip: regular files of the layout only, nothing followed. False when
    `source` is absent or empty."""
    try:
        st = os.stat(source, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        raise BundleRefused(f"{source} is not a directory")
    fd = open_dir(source)
    try:
        with os.scandir(fd) as found:
            names = sorted(entry.name for entry in found)
        if not names:
            return False
        if len(names) > MAX_ENTRIES:
            raise BundleRefused(f"{len(names)} entries, over the limit of {MAX_ENTRIES}")
        budget = MAX_UNPACKED
        for name in names:
            _checked_name(name)
            try:
                handle = os.fdopen(open_regular_at(fd, name), "rb")
            except OSError as exc:
                raise BundleRefused(f"entry {name!r}: {exc}") from None
            with handle:
                budget -= _write_new(dest, name, _reading(handle), budget)
    finally:
        os.close(fd)
    return True


def load_bundle(directory: Path) -> Bundle:
    """The validated contents of an extracted bundle; BundleRefused naming the first problem."""
    try:
        state = StateStore(directory).load()
    except InvalidInput as exc:
        said = _UNUSABLE.search(str(exc))
        raise BundleRefused(f"{STATE}: {said.group(1) if said else 'unusable'}") from None
    bundle = Bundle(state)
    names = sorted({j for p in directory.iterdir() if (j := journal_of(p.name)) is not None})
    for name in names:
        try:
            entries = list(Journal(directory / f"{name}.ndjson").read())
        except InvalidInput as exc:
            text = str(exc).replace(f"{directory}/", "")
            raise BundleRefused(" ".join(text.split())[:300]) from None
        for entry in entries:
            if not entry["id"]:
                raise BundleRefused(f"journal {name}: an entry with an empty id")
        bundle.journals[name] = entries
    return bundle


__all__ = [
    "MAX_ENTRIES",
    "MAX_RATIO",
    "MAX_UNPACKED",
    "Bundle",
    "BundleRefused",
    "copy_dir",
    "extract_zip",
    "in_layout",
    "journal_of",
    "load_bundle",
]
