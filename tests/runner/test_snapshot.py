"""The snapshot against real repositories: history, isolation, selection and odd shapes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.errors import InvalidInput
from holon.runner.snapshot import OBJECTS_LINK, take_snapshot
from tests.conftest import git


def _snap(source: Path, tmp_path: Path, **kw: Any) -> object:
    root = tmp_path / "run"
    root.mkdir(exist_ok=True)
    return take_snapshot(source, root / "workspace", tmp_path / "private" / "git", **kw)


def _count_objects(repo: Path) -> str:
    return git(repo, "count-objects", "-v")


def test_history_and_status_match_the_users(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo()
    index_stat = (repo / ".git" / "index").stat()
    objects_before = _count_objects(repo)
    snap = _snap(repo, tmp_path)
    # Taking the snapshot did not even refresh the original's index.
    after = (repo / ".git" / "index").stat()
    assert (after.st_mtime_ns, after.st_size) == (index_stat.st_mtime_ns, index_stat.st_size)
    ws = snap.root  # type: ignore[attr-defined]
    assert git(ws, "log", "--format=%s") == "initial\n"
    assert git(ws, "status", "--porcelain") == git(repo, "status", "--porcelain")
    assert git(ws, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")
    assert git(ws, "symbolic-ref", "HEAD") == "refs/heads/main\n"
    # The agent commits in its snapshot: nothing reaches the original's object store or index.
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "agent commit")
    assert _count_objects(repo) == objects_before
    assert git(repo, "log", "--format=%s") == "initial\n"
    # The commit changed nothing in the files, so the patch since the start is empty.
    assert snap.diff() == b""  # type: ignore[attr-defined]


def test_credentials_and_local_settings_left_behind(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    git(
        repo, "remote", "add", "origin", "https://x-access-token:ghs_secretvalue@github.com/o/r.git"
    )
    git(repo, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic c2VjcmV0")
    git(repo, "config", "credential.helper", "store")
    git(repo, "config", "core.hooksPath", "/somewhere")
    snap = _snap(repo, tmp_path)
    config = (snap.root / ".git" / "config").read_text()  # type: ignore[attr-defined]
    assert "ghs_secretvalue" not in config
    assert "extraheader" not in config
    assert "credential" not in config
    assert "hooksPath" not in config
    ws = snap.root  # type: ignore[attr-defined]
    assert git(ws, "remote", "get-url", "origin") == "https://github.com/o/r.git\n"
    assert not (ws / ".git" / "hooks").exists()


def test_shallow_clone_keeps_its_shallow_history(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    origin = make_repo("origin", dirty=False)
    (origin / "tracked.txt").write_text("second\n")
    git(origin, "commit", "-q", "-am", "second")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    snap = _snap(clone, tmp_path)
    assert git(snap.root, "log", "--format=%s") == "second\n"  # type: ignore[attr-defined]
    assert (snap.root / ".git" / "shallow").is_file()  # type: ignore[attr-defined]


def test_worktree_workspace(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(dirty=False)
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tree))
    (tree / "tracked.txt").write_text("edited in worktree\n")
    snap = _snap(tree, tmp_path)
    assert snap.kind == "git"  # type: ignore[attr-defined]
    assert snap.branch == "feature"  # type: ignore[attr-defined]
    ws = snap.root  # type: ignore[attr-defined]
    assert git(ws, "log", "--format=%s") == "initial\n"
    assert git(ws, "status", "--porcelain") == " M tracked.txt\n"


def test_unborn_repository(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    snap = _snap(repo, tmp_path)
    assert snap.head is None  # type: ignore[attr-defined]
    assert (snap.root / "a.txt").read_text() == "a\n"  # type: ignore[attr-defined]


def test_selection_odd_names_symlinks_and_deletions(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    (repo / "with space é.txt").write_text("odd name\n")
    (repo / "-dash.txt").write_text("dash\n")
    os.symlink("tracked.txt", repo / "link.txt")
    (repo / "doomed.txt").unlink()  # deleted but not staged
    snap = _snap(repo, tmp_path)
    ws = snap.root  # type: ignore[attr-defined]
    assert (ws / "with space é.txt").read_text() == "odd name\n"
    assert (ws / "-dash.txt").read_text() == "dash\n"
    assert os.readlink(ws / "link.txt") == "tracked.txt"
    assert not (ws / "doomed.txt").exists()
    assert not (ws / "debug.log").exists()
    assert not (ws / "build").exists()
    assert (ws / "untracked.txt").exists()
    # Copies, not hardlinks.
    assert (ws / "tracked.txt").stat().st_ino != (repo / "tracked.txt").stat().st_ino
    assert (repo / "tracked.txt").stat().st_nlink == 1
    # The start tree holds exactly what was copied.
    private = f"--git-dir={snap.private_git}"  # type: ignore[attr-defined]
    files = git(ws, private, "ls-tree", "-r", "--name-only", snap.start_tree)  # type: ignore[attr-defined]
    assert "untracked.txt" in files.splitlines()
    assert "doomed.txt" not in files.splitlines()


def test_subdirectory_is_a_plain_directory(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo()
    sub = repo / "pkg"
    sub.mkdir()
    (sub / "mod.py").write_text("x = 1\n")
    snap = _snap(sub, tmp_path)
    assert snap.kind == "directory"  # type: ignore[attr-defined]
    assert not (snap.root / ".git").exists()  # type: ignore[attr-defined]


def test_snapshot_borrows_a_pack_of_reachable_objects(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    snap = _snap(repo, tmp_path)
    store = tmp_path / "run" / OBJECTS_LINK
    assert store.is_dir()
    assert not store.is_symlink()
    assert snap.objects == store  # type: ignore[attr-defined]
    assert {".idx", ".pack"} <= {p.suffix for p in (store / "pack").iterdir()}
    alternates = (snap.root / ".git" / "objects" / "info" / "alternates").read_text()  # type: ignore[attr-defined]
    assert alternates.splitlines() == [f"../../../{OBJECTS_LINK}"]
    # Every object of history and index is there: git can check the whole repository.
    subprocess.run(["git", "fsck", "--no-dangling"], cwd=snap.root, check=True)  # type: ignore[attr-defined]


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a directory"):
        _snap(tmp_path / "missing", tmp_path)


def test_patch_applies_with_mode_change(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(dirty=False)
    snap = _snap(repo, tmp_path)
    ws = snap.root  # type: ignore[attr-defined]
    os.chmod(ws / "tracked.txt", 0o755)
    patch = snap.diff()  # type: ignore[attr-defined]
    assert b"new mode 100755" in patch
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", f"{repo}/.", str(copy)], check=True)
    subprocess.run(["git", "apply"], input=patch, cwd=copy, check=True)
    assert os.stat(copy / "tracked.txt").st_mode & 0o111


def test_empty_workspaces(tmp_path: Path) -> None:
    empty_repo = tmp_path / "empty-repo"
    empty_repo.mkdir()
    git(empty_repo, "init", "-q")
    empty_dir = tmp_path / "empty-dir"
    empty_dir.mkdir()
    for i, source in enumerate((empty_repo, empty_dir)):
        root = tmp_path / f"run{i}"
        snap = take_snapshot(source, root / "workspace", tmp_path / f"private{i}" / "git")
        assert snap.diff() == b""
        (snap.root / "new.txt").write_text("new\n")
        assert b"+new" in snap.diff()


def test_submodules_do_not_break_the_snapshot(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    git(inner, "init", "-q")
    (inner / "f.txt").write_text("inner\n")
    git(inner, "add", "f.txt")
    git(inner, "commit", "-q", "-m", "inner")
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q")
    (outer / "a.txt").write_text("a\n")
    git(outer, "add", "a.txt")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    git(outer, "commit", "-q", "-m", "with submodule")
    snap = _snap(outer, tmp_path)
    ws = snap.root  # type: ignore[attr-defined]
    assert (ws / "sub" / "f.txt").read_text() == "inner\n"
    assert git(ws, "status", "--porcelain") == ""
    (ws / "a.txt").write_text("a\nagent\n")
    patch = snap.diff()  # type: ignore[attr-defined]
    assert b"+agent" in patch
    assert b"sub" not in patch


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository another owner")
def test_repository_of_another_owner_is_still_a_git_snapshot(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # Global config (and its safe.directory list) is ignored; the named workspace is trusted.
    repo = make_repo()
    subprocess.run(["chown", "-R", "12345:12345", str(repo)], check=True)
    snap = _snap(repo, tmp_path)
    assert snap.kind == "git"  # type: ignore[attr-defined]
    assert snap.head is not None  # type: ignore[attr-defined]


def test_the_directories_are_told_before_the_questions_are_asked(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`on_ready` (a container's create, run.py) goes out before the snapshot starts its git
    questions: starting their processes takes the snapshot's thread a few ms."""
    from holon.runner import snapshot as snapshot_module

    events: list[str] = []
    real_call = snapshot_module.GitCall

    class Recorded(real_call):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kw: Any) -> None:
            events.append("question")
            super().__init__(*args, **kw)

    def ready(dest: Path, objects: Path | None) -> None:
        assert objects is not None
        assert list(objects.iterdir()) == []
        assert dest.is_dir()
        events.append("ready")

    monkeypatch.setattr(snapshot_module, "GitCall", Recorded)
    snap = _snap(make_repo(), tmp_path, on_ready=ready)
    assert events == ["ready", *["question"] * 5]
    assert (snap.root / "tracked.txt").is_file()  # type: ignore[attr-defined]
