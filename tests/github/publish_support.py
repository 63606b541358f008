"""Real patches for the publishing tests, made the way Holon's runner makes them, and the
loopback GitHub seeded with the same base files.

    patch = runner_patch(tmp_path, {"a.txt": b"x\\n"}, lambda ws: (ws / "a.txt").write_text("y\\n"))
    base = seed(github_server.state.repos[REPO], {"a.txt": b"x\\n"})

`runner_patch` commits the files in a scratch repository, takes the runner's snapshot of it
(`take_snapshot`), lets `change` edit the snapshot as an agent would, and returns the runner's
own `diff.patch` (`Snapshot.diff`: `git diff --binary --full-index --no-renames`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from holon.github.publish_apply import Entry
from holon.runner.snapshot import take_snapshot
from tests.conftest import git
from tests.support.github_fake.state import Repo

Files = Mapping[str, bytes]
EXECUTABLE = "100755"


def runner_patch(
    tmp_path: Path,
    files: Files,
    change: Callable[[Path], object],
    executable: frozenset[str] = frozenset(),
    name: str = "src",
) -> bytes:
    source = tmp_path / name
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    for path, data in files.items():
        target = source / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if path in executable:
            target.chmod(0o755)
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "base")
    root = tmp_path / f"{name}-run"
    root.mkdir()
    snapshot = take_snapshot(source, root / "workspace", tmp_path / f"{name}-private" / "git")
    change(snapshot.root)
    patch: bytes = snapshot.diff()  # type: ignore[attr-defined]
    return patch


def seed(
    repo: Repo, files: Files, executable: frozenset[str] = frozenset(), branch: str = "main"
) -> str:
    """A commit with exactly `files` on top of `branch` of the fake; the branch moves to it."""
    entries = {
        path: {
            "mode": EXECUTABLE if path in executable else "100644",
            "type": "blob",
            "sha": repo.blob(data),
        }
        for path, data in files.items()
    }
    head = repo.refs[f"heads/{branch}"]
    commit = repo.commit("base", repo.tree(entries), [head])
    repo.refs[f"heads/{branch}"] = commit
    return commit


def local_base(
    files: Files, executable: frozenset[str] = frozenset()
) -> tuple[dict[str, Entry], dict[str, bytes]]:
    """The base as a tree listing and a blob store, for the apply step alone (no GitHub)."""
    from tests.support.github_fake.state import git_sha

    blobs = {git_sha("blob", data): data for data in files.values()}
    entries = {
        path: Entry(EXECUTABLE if path in executable else "100644", git_sha("blob", data))
        for path, data in files.items()
    }
    return entries, blobs


def write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)


def remove(path: Path) -> None:
    os.unlink(path)
