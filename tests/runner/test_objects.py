"""The pack a snapshot borrows: everything its refs and index reach, nothing else."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from holon.runner.snapshot import OBJECTS_LINK, Snapshot, take_snapshot
from tests.conftest import git


def _snap(source: Path, tmp_path: Path) -> Snapshot:
    return take_snapshot(source, tmp_path / "run" / "workspace", tmp_path / "private" / "git")


def _has(ws: Path, obj: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", obj], cwd=ws).returncode == 0


def test_every_ref_the_snapshot_carries_and_the_index_are_readable(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "feature.txt").write_text("feature\n")
    git(repo, "add", "feature.txt")
    git(repo, "commit", "-q", "-m", "feature")
    git(repo, "tag", "-a", "-m", "annotated", "v1")
    git(repo, "checkout", "-q", "main")
    (repo / "stashed.txt").write_text("stashed\n")
    git(repo, "add", "stashed.txt")
    git(repo, "stash", "-q")
    (repo / "staged.txt").write_text("staged, never committed\n")
    git(repo, "add", "staged.txt")
    git(repo, "pack-refs", "--all")  # packed refs are carried as well as loose ones
    snap = _snap(repo, tmp_path)
    ws = snap.root
    for ref in ("feature", "v1", "v1^{commit}", "stash", "stash^{tree}", ":staged.txt", "HEAD"):
        assert _has(ws, ref), ref
    assert git(ws, "show", "feature:feature.txt") == "feature\n"
    assert git(ws, "show", "stash:stashed.txt") == "stashed\n"
    assert git(ws, "diff", "--cached", "--name-only") == "staged.txt\n"
    subprocess.run(["git", "fsck", "--no-dangling"], cwd=ws, check=True, capture_output=True)


def test_objects_of_a_shared_clone_come_from_its_own_alternates(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    origin = make_repo("origin", dirty=False)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--shared", str(origin), str(clone))
    assert not any((clone / ".git" / "objects" / "pack").iterdir())
    snap = _snap(clone, tmp_path)
    assert git(snap.root, "log", "--format=%s") == "initial\n"
    # The snapshot is self-contained: the pack holds them, no alternate names the origin.
    alternates = (snap.root / ".git" / "objects" / "info" / "alternates").read_text()
    assert alternates == f"../../../{OBJECTS_LINK}\n"


def test_linked_worktree_index_is_carried(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(dirty=False)
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(tree))
    (tree / "only-in-worktree.txt").write_text("staged in the worktree\n")
    git(tree, "add", "only-in-worktree.txt")
    snap = _snap(tree, tmp_path)
    assert git(snap.root, "show", ":only-in-worktree.txt") == "staged in the worktree\n"


def test_unborn_repository_gets_an_empty_pack(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    snap = _snap(repo, tmp_path)
    assert git(snap.root, "status", "--porcelain") == "?? a.txt\n"
    (snap.root / "a.txt").write_text("b\n")
    assert b"+b" in snap.diff()


def test_packing_writes_nothing_into_the_original_and_crosses_filesystems(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    store = repo / ".git" / "objects"
    before = sorted(store.rglob("*"))
    # A run root on another filesystem (tmpfs) than the repository: git's temporary pack file is
    # made in the pack's own directory, not in the original store.
    other = Path(tempfile.mkdtemp(dir="/dev/shm")) if os.path.isdir("/dev/shm") else tmp_path
    try:
        snap = take_snapshot(repo, other / "run" / "workspace", other / "private" / "git")
        assert git(snap.root, "log", "--format=%s") == "initial\n"
    finally:
        shutil.rmtree(other, ignore_errors=True)
    assert sorted(store.rglob("*")) == before


def test_repository_path_with_a_colon(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo("odd:name")
    snap = _snap(repo, tmp_path)
    assert git(snap.root, "log", "--format=%s") == "initial\n"
