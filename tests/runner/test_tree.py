"""Holon's trees of a work tree: nested repositories are recorded as their files."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from holon.fsutil import remove_tree
from holon.runner.snapshot import Snapshot, take_snapshot
from holon.runner.tree import TreeError, nested_repositories
from tests.conftest import git


def _snap(source: Path, tmp_path: Path, **kw: bool) -> Snapshot:
    return take_snapshot(source, tmp_path / "run" / "workspace", tmp_path / "private" / "git", **kw)


def _start_files(snap: Snapshot) -> list[str]:
    out = git(
        snap.root, f"--git-dir={snap.private_git}", "ls-tree", "-r", "--name-only", snap.start_tree
    )
    return out.splitlines()


def test_nested_repositories_outermost_only_any_kind_of_git_entry(tmp_path: Path) -> None:
    top = tmp_path / "top"
    (top / ".git").mkdir(parents=True)
    (top / "a" / ".git").mkdir(parents=True)
    (top / "a" / "inner" / ".git").mkdir(parents=True)  # inside a nested one: not listed again
    (top / "b" / "c").mkdir(parents=True)
    (top / "b" / "c" / ".git").write_text("gitdir: /elsewhere\n")
    (top / "d").mkdir()
    os.symlink("/elsewhere", top / "d" / ".git")
    (top / "plain").mkdir()
    (top / "plain" / "git").write_text("not a .git entry\n")
    assert nested_repositories(top) == [b"a", b"b/c", b"d"]


def test_users_untracked_nested_repository_is_snapshotted_as_files(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    nested = repo / "tool"
    nested.mkdir()
    git(nested, "init", "-q")  # unborn: `git add` on it used to fail the whole snapshot
    (nested / "run.sh").write_text("echo tool\n")
    (nested / "trace.log").write_text("ignored by the outer .gitignore\n")
    os.symlink("run.sh", nested / "link.sh")
    snap = _snap(repo, tmp_path)
    files = _start_files(snap)
    assert {"tool/run.sh", "tool/link.sh"} <= set(files)
    assert "tool/trace.log" not in files
    assert not any("/.git" in f for f in files)
    # The agent edits a file of it, deletes another: both changes are carried.
    (snap.root / "tool" / "run.sh").write_text("echo changed\n")
    (snap.root / "tool" / "link.sh").unlink()
    patch = snap.diff()
    assert b"+echo changed" in patch
    assert b"deleted file mode 120000" in patch


def test_include_ignored_carries_ignored_files_of_nested_repositories(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    snap = _snap(repo, tmp_path, include_ignored=True)
    made = snap.root / "gen"
    (made / ".git").mkdir(parents=True)
    (made / "out.log").write_text("ignored, but asked for\n")
    patch = snap.diff()
    assert b"b/gen/out.log" in patch


def test_nested_repository_in_a_directory_workspace(tmp_path: Path) -> None:
    source = tmp_path / "plain"
    (source / "vendor" / ".git").mkdir(parents=True)
    (source / "vendor" / "lib.c").write_text("int lib;\n")
    snap = _snap(source, tmp_path)
    assert snap.kind == "directory"
    assert _start_files(snap) == ["vendor/lib.c"]
    (snap.root / "vendor" / "lib.c").write_text("int lib2;\n")
    assert b"+int lib2;" in snap.diff()


def test_patch_with_a_new_nested_repository_applies(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo(dirty=False)
    snap = _snap(repo, tmp_path)
    app = snap.root / "app"
    app.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=app, check=True)
    (app / "main.py").write_text("print(1)\n")
    subprocess.run(["git", "add", "main.py"], cwd=app, check=True)
    patch = snap.diff()
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", f"{repo}/.", str(copy)], check=True)
    subprocess.run(["git", "apply", "--binary"], input=patch, cwd=copy, check=True)
    assert (copy / "app" / "main.py").read_text() == "print(1)\n"
    assert not (copy / "app" / ".git").exists()


def test_nested_repository_under_an_ignored_directory_stays_ignored(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    snap = _snap(repo, tmp_path)
    dep = snap.root / "build" / "dep"
    (dep / ".git").mkdir(parents=True)
    (dep / "lib.c").write_text("ignored with build/\n")
    (snap.root / "kept").mkdir()
    (snap.root / "kept" / ".git").write_text("gitdir: /nowhere\n")
    (snap.root / "kept" / "x.txt").write_text("kept\n")
    (snap.root / "kept" / "y.log").write_text("ignored by *.log\n")
    patch = snap.diff()
    assert b"build/dep" not in patch
    assert b"b/kept/x.txt" in patch
    assert b"y.log" not in patch


def _long_path(top: Path, levels: int) -> None:
    """`levels` directories of 200 bytes under `top`, each made from the last, and a file."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d" * 200, dir_fd=fd)
            step = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = step
        os.close(os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def test_path_git_cannot_record_under_include_ignored_is_refused(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    for include_ignored, refused in ((False, False), (True, True)):
        snap = _snap(repo, tmp_path / str(include_ignored), include_ignored=include_ignored)
        (snap.root / "build").mkdir(exist_ok=True)
        _long_path(snap.root / "build", 25)  # build/ is ignored
        if refused:
            with pytest.raises(TreeError, match=r"^build/d+\.\.\.d+ \(4226 bytes\) is longer"):
                snap.diff()
        else:
            assert b"build/" not in snap.diff()
        remove_tree(snap.root)
