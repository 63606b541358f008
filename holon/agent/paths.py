"""Where the built-in tools may read and write: the workspace and the output directory, and read
Holon's input (the spec, the context), no more.

A path the model names is workspace-relative, or absolute under the workspace or the output
directory; `..` is resolved lexically and may not climb out of its root. The path is then walked
one component at a time from an open directory, never following a link on the way: a symlink met
is read (readlink) and its target resolved the same way from the top, so a link pointing inside
the roots is followed and one pointing anywhere else (/etc/passwd, /proc) is refused. Nothing is
ever opened through a path the model or its commands could have linked elsewhere.

The output's `manifest.json`, `summary.md` and `evidence/` belong to the agent and are refused.
The input directory is read-only to the tools: the context is there to be read in full (the
prompt shows each file's head), never to be changed.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from holon.fsutil import lstat_at

# Entries of the output directory the agent itself writes: the model's tools never touch them.
OWN_OUTPUTS = frozenset({"manifest.json", "summary.md", "evidence"})
_MAX_LINKS = 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathRefused(Exception):
    """A path the tools will not use; the message says why, for the model (one line)."""


@dataclass(frozen=True)
class Root:
    name: str  # "workspace", "output" or "input" (read-only)
    path: str  # absolute, normalized, as given
    real: str  # the same with the root's own links resolved (Holon made it; it is trusted)


@dataclass
class Target:
    """A resolved path: its parent directory held open, the last component, what is there now."""

    parent_fd: int
    name: str
    st: os.stat_result | None
    root: Root
    parts: tuple[str, ...]  # below the root; empty for the root itself

    @property
    def shown(self) -> str:
        """How the tools name the path to the model: relative to the workspace, or absolute."""
        rel = "/".join(self.parts)
        if self.root.name == "workspace":
            return rel or "."
        return posixpath.join(self.root.path, rel) if rel else self.root.path

    def close(self) -> None:
        os.close(self.parent_fd)

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Sandbox:
    """Resolves the model's paths under the workspace and the output directory."""

    def __init__(self, workspace: Path, output: Path, input_dir: Path | None = None) -> None:
        roots = [_root("workspace", workspace), _root("output", output)]
        if input_dir is not None:
            roots.append(_root("input", input_dir))
        # The most specific root first, so an output directory inside the workspace is still
        # recognized as the output (and its own files refused).
        self._roots = sorted(roots, key=lambda r: len(r.path), reverse=True)
        self.workspace = next(r for r in roots if r.name == "workspace")

    def locate(self, raw: str) -> tuple[Root, tuple[str, ...]]:
        """The root and components `raw` names, lexically; PathRefused when outside both."""
        if not raw:
            raise PathRefused("the path is empty")
        if "\0" in raw:
            raise PathRefused("the path contains a NUL character")
        joined = raw if raw.startswith("/") else posixpath.join(self.workspace.path, raw)
        return self._split(posixpath.normpath(joined), raw)

    def _split(self, normalized: str, raw: str) -> tuple[Root, tuple[str, ...]]:
        if normalized.startswith("//"):
            normalized = "/" + normalized.lstrip("/")
        for root in self._roots:
            for base in (root.path, root.real):
                if normalized == base:
                    return root, ()
                if normalized.startswith(base.rstrip("/") + "/"):
                    rest = normalized[len(base.rstrip("/")) + 1 :]
                    parts = tuple(p for p in rest.split("/") if p)
                    _check_own(root, parts, raw)
                    return root, parts
        raise PathRefused(f"path outside the workspace: {raw}")

    def resolve(
        self,
        raw: str,
        *,
        follow_last: bool = True,
        make_parents: bool = False,
        writing: bool = False,
    ) -> Target:
        """Walk to `raw`'s parent without following links out of the roots; the caller closes
        the returned Target. With `make_parents`, missing directories on the way are created.
        With `follow_last`, a link as the last component is followed like the others. With
        `writing`, a path that is (or leads through a link into) the input is refused."""
        root, parts = self.locate(raw)
        for _ in range(_MAX_LINKS):
            if writing and root.name == "input":
                raise PathRefused(f"{raw} is Holon's input: read-only (write in the workspace)")
            if not parts:
                fd = os.open(root.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                return Target(fd, ".", os.fstat(fd), root, ())
            found = self._walk(root, parts, raw, follow_last, make_parents)
            if isinstance(found, Target):
                return found
            root, parts = found
        raise PathRefused(f"{raw}: too many symlinks on the way")

    def _walk(
        self,
        root: Root,
        parts: tuple[str, ...],
        raw: str,
        follow_last: bool,
        make_parents: bool,
    ) -> Target | tuple[Root, tuple[str, ...]]:
        fd = os.open(root.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for index, part in enumerate(parts[:-1]):
                try:
                    step = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    st = lstat_at(fd, part)
                    if st is not None and stat.S_ISLNK(st.st_mode):
                        return self._through_link(fd, root, parts, index, raw)
                    if st is None and make_parents:
                        os.mkdir(part, 0o755, dir_fd=fd)
                        step = os.open(part, _DIR_FLAGS, dir_fd=fd)
                    elif st is None:
                        raise PathRefused(f"{raw}: no such file or directory") from None
                    elif exc.errno in (errno.ENOTDIR, errno.ELOOP):
                        raise PathRefused(f"{raw}: {part} is not a directory") from None
                    else:
                        raise
                os.close(fd)
                fd = step
            last = parts[-1]
            st = lstat_at(fd, last)
            if follow_last and st is not None and stat.S_ISLNK(st.st_mode):
                return self._through_link(fd, root, parts, len(parts) - 1, raw)
            target = Target(fd, last, st, root, parts)
            fd = -1  # the Target owns it now
            return target
        finally:
            if fd != -1:
                os.close(fd)

    def _through_link(
        self, fd: int, root: Root, parts: tuple[str, ...], index: int, raw: str
    ) -> tuple[Root, tuple[str, ...]]:
        """Where the link at parts[index] leads, with the rest of the path after it."""
        link = os.readlink(parts[index], dir_fd=fd)
        base = posixpath.join(root.path, *parts[:index])
        rest = parts[index + 1 :]
        normalized = posixpath.normpath(posixpath.join(base, link, *rest))
        try:
            return self._split(normalized, raw)
        except PathRefused:
            shown = "/".join(parts[: index + 1])
            raise PathRefused(
                f"path outside the workspace: {raw} ({shown} is a symlink to {link})"
            ) from None


def _root(name: str, path: Path) -> Root:
    given = posixpath.normpath(str(path.absolute()))
    return Root(name, given, os.path.realpath(given))


def _check_own(root: Root, parts: tuple[str, ...], raw: str) -> None:
    if root.name == "output" and parts and parts[0] in OWN_OUTPUTS:
        raise PathRefused(
            f"{raw} is the agent's own output (manifest.json, summary.md, evidence/); "
            "tools may not touch it"
        )
