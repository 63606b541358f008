"""The output directory after the agent ran: Holon's own files placed, the agent's ones checked.

The agent wrote this directory, so nothing in it is followed. Every lookup is made under a
directory fd opened before the agent started; Holon's files (`run.log`, `run.json`, `diff.patch`)
replace whatever entry is at their name by an atomic rename, never writing through it; an artifact
counts only as a regular file reached without a symlink. What the agent got wrong is returned as
notes (harmless, replaced) or violations (the run fails).
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal

from holon.contract.layout import MANIFEST_FILE, PATCH_FILE
from holon.errors import HolonError
from holon.fsutil import (
    NotRegular,
    kind_of,
    lstat_at,
    open_regular_at,
    place_at,
    read_regular_at,
    remove_at,
)
from holon.runner.binary_patch import with_binary_contents
from holon.secrets import Redactor, StreamRedactor

if TYPE_CHECKING:
    # The models load when the agent is done (run.py loads them while it runs), not before.
    from holon.contract.manifest import Manifest
    from holon.contract.spec import ArtifactSpec
    from holon.runner.record import PatchInfo

MANIFEST_LIMIT = 8 * 1024 * 1024
_CHUNK = 1024 * 1024


@dataclass
class Findings:
    notes: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


class OutputDir:
    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    def reclaim(self) -> None:
        """Give the owner back full access to the directory itself (an agent may chmod it 000;
        it runs as the same user)."""
        with contextlib.suppress(OSError):
            mode = stat.S_IMODE(os.fstat(self.fd).st_mode)
            if mode & stat.S_IRWXU != stat.S_IRWXU:
                os.fchmod(self.fd, mode | stat.S_IRWXU)

    def make_way(self, name: str, found: Findings) -> None:
        """Clear the entry at one of Holon's own names, saying what the agent had put there."""
        st = lstat_at(self.fd, name)
        if st is None:
            return
        if stat.S_ISDIR(st.st_mode):
            try:
                remove_at(self.fd, name)
                fate = "removed"
            except OSError:
                # The agent can make its tree unremovable (mode 000 inside); a rename within
                # the same directory needs no permission on the tree itself.
                aside = f".{name}.agent-{uuid.uuid4().hex[:8]}"
                os.rename(name, aside, src_dir_fd=self.fd, dst_dir_fd=self.fd)
                fate = f"moved aside to {aside}"
            found.violations.append(
                f"the agent made {name} a directory ({fate}): {name} is Holon's"
            )
        elif stat.S_ISREG(st.st_mode):
            found.notes.append(f"the agent wrote {name}; replaced by the runner's own")
        else:
            found.notes.append(f"the agent made {name} {kind_of(st)}; replaced, not followed")

    def place(self, name: str, chunks: Iterable[bytes]) -> int:
        return place_at(self.fd, name, chunks)

    def read_manifest(self) -> tuple[Manifest | None, str | None]:
        from holon.contract.manifest import ManifestError, parse_manifest

        try:
            raw = read_regular_at(self.fd, MANIFEST_FILE, MANIFEST_LIMIT)
        except FileNotFoundError:
            return None, f"{MANIFEST_FILE}: missing (the agent wrote no manifest)"
        except NotRegular as exc:
            return None, f"{MANIFEST_FILE}: not read ({exc}; only a regular file counts)"
        except OSError as exc:
            return None, f"{MANIFEST_FILE}: unreadable ({exc.strerror})"
        try:
            return parse_manifest(raw, source=MANIFEST_FILE), None
        except ManifestError as exc:
            return None, str(exc)

    def _state(self, relpath: str) -> str | None:
        """None for a regular file inside the directory; otherwise what is wrong with it."""
        try:
            os.close(open_regular_at(self.fd, relpath))
        except FileNotFoundError:
            return "missing"
        except NotRegular as exc:
            return str(exc)
        except OSError as exc:
            return f"{relpath} is unreadable ({exc.strerror})"
        return None

    def check_artifacts(
        self, declared: Iterable[ArtifactSpec], manifest: Manifest | None, found: Findings
    ) -> None:
        for artifact in declared:
            state = self._state(artifact.path)
            if state == "missing":
                if artifact.required:
                    found.missing.append(artifact.path)
            elif state is not None:
                found.violations.append(
                    f"artifact {artifact.path}: {state}; only a regular file in the output counts"
                )
        if manifest is None:
            return
        for ref in manifest.artifacts:
            path = PurePosixPath(ref.path)
            if path.is_absolute() or ".." in path.parts:
                found.violations.append(
                    f"manifest lists artifact {ref.path[:200]!r} outside the output directory"
                )
                continue
            state = self._state(ref.path)
            if state == "missing":
                found.notes.append(f"manifest lists {ref.path[:200]}, which is not in the output")
            elif state is not None and not self._is_plain_dir(ref.path):
                found.violations.append(
                    f"manifest artifact {ref.path[:200]}: {state}; "
                    "only a regular file in the output counts"
                )

    def _is_plain_dir(self, relpath: str) -> bool:
        """A directory reached without symlinks: an artifact may be a folder of files."""
        current = self.fd
        try:
            for part in PurePosixPath(relpath).parts:
                step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
                if current != self.fd:
                    os.close(current)
                current = step
            return True
        except OSError:
            return False
        finally:
            if current != self.fd:
                os.close(current)

    def chunks_of(self, relpath: str) -> Iterator[bytes]:
        fd = open_regular_at(self.fd, relpath)
        with os.fdopen(fd, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                yield chunk


def secrets_in(chunks: Iterable[bytes], secrets: dict[str, Redactor]) -> list[str]:
    """The names of the secrets whose values (in any redacted form) occur in the stream."""
    streams = {name: StreamRedactor(redactor) for name, redactor in secrets.items()}
    for chunk in chunks:
        for stream in streams.values():
            stream.feed(chunk)
    for stream in streams.values():
        stream.flush()
    return sorted(name for name, stream in streams.items() if stream.replaced)


def collect_patch(
    out: OutputDir, runner_patch: Callable[[], bytes], secrets: dict[str, Redactor], found: Findings
) -> PatchInfo:
    """The agent's diff.patch when it is a regular file, else the runner's; refused if it holds
    the value of a forwarded secret (it would be published), in its text or in a binary file's
    contents (`binary_patch`). A refused patch is the agent's work
    dropped, so it is a violation: the run fails rather than succeed without it."""
    from holon.runner.record import PatchInfo

    st = lstat_at(out.fd, PATCH_FILE)
    if st is not None and stat.S_ISREG(st.st_mode):
        source: Literal["agent", "runner"] = "agent"
        size = st.st_size
        chunks = with_binary_contents(out.chunks_of(PATCH_FILE))
        leaked = secrets_in(chunks, secrets) if secrets else []
    else:
        out.make_way(PATCH_FILE, found)
        try:
            patch = runner_patch()
        except HolonError as exc:
            return PatchInfo(path=None, source="none", error=str(exc))
        leaked = secrets_in(with_binary_contents([patch]), secrets) if secrets else []
        source = "runner"
        size = len(patch)
        if not leaked:
            out.place(PATCH_FILE, [patch])
    if leaked:
        remove_at(out.fd, PATCH_FILE)
        names = ", ".join(leaked)
        message = f"diff.patch refused: it holds the value of forwarded secret(s) {names}"
        found.violations.append(message)
        return PatchInfo(path=None, source="none", error=message)
    return PatchInfo(path=str(out.path / PATCH_FILE), source=source, bytes=size)
