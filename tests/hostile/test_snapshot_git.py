"""Hostile corpus: the snapshot's git boundary (config, object store, nested repositories).

Each case is an agent, or a state an agent leaves behind, that once made Holon's own git run the
agent's commands on the host, open host paths, write into the original object store, hand out
objects the user never committed, or lose the agent's work while reporting success.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.runner.snapshot import OBJECTS_LINK, Snapshot, take_snapshot
from tests.conftest import git, spec_for


def _snap(source: Path, tmp_path: Path) -> Snapshot:
    return take_snapshot(source, tmp_path / "run" / "workspace", tmp_path / "private" / "git")


def _pwn(tmp_path: Path) -> tuple[Path, str]:
    marker = tmp_path / "pwned"
    return marker, f"touch {marker}"


def _objects_listing(repo: Path) -> list[str]:
    store = repo / ".git" / "objects"
    return sorted(str(p.relative_to(store)) for p in store.rglob("*"))


def _apply(repo: Path, patch: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "apply-check"
    subprocess.run(["cp", "-a", f"{repo}/.", str(copy)], check=True)
    subprocess.run(["git", "apply", "--binary", str(patch)], cwd=copy, check=True)
    return copy


# --- Holon's git never runs configuration the agent could write --------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "private-config",  # the runner's start git dir, as if the agent had found it
        "private-include",  # an include.path in it, pointing at an agent file
        "private-attributes",  # info/attributes of the runner's git dir naming the filter
        "private-commondir",  # a commondir file sending git to the agent's own .git
        "snapshot-config",  # the snapshot's own .git/config
    ],
)
def test_filter_planted_in_a_git_dir_is_never_run(
    where: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    snap = _snap(repo, tmp_path)
    marker, cmd = _pwn(tmp_path)
    evil = f'[filter "pwn"]\n\tclean = {cmd}\n\trequired = true\n[core]\n\tfsmonitor = {cmd}\n'
    ws = snap.root
    (ws / ".gitattributes").write_text("* filter=pwn\n")
    (ws / "tracked.txt").write_text("changed by the agent\n")
    private = snap.private_git
    if where == "private-config":
        with (private / "config").open("a") as handle:
            handle.write(evil)
    elif where == "private-include":
        (ws / "evil.cfg").write_text(evil)
        with (private / "config").open("a") as handle:
            handle.write(f"[include]\n\tpath = {ws / 'evil.cfg'}\n")
    elif where == "private-attributes":
        with (private / "config").open("a") as handle:
            handle.write(evil)
        (private / "info").mkdir(exist_ok=True)
        (private / "info" / "attributes").write_text("* filter=pwn\n")
    elif where == "private-commondir":
        with (ws / ".git" / "config").open("a") as handle:
            handle.write(evil)
        (private / "commondir").write_text(str(ws / ".git") + "\n")
    else:
        with (ws / ".git" / "config").open("a") as handle:
            handle.write(evil)
    patch = snap.diff()
    assert not marker.exists()
    assert b"+changed by the agent" in patch
    assert b"+* filter=pwn" in patch  # the attributes file is carried as the agent's change


def test_agent_plants_filters_hooks_and_fsmonitor_everywhere_it_can_write(
    run_agent: Callable[..., Any],
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # HOME is passed to a local agent: its ~/.gitconfig is writable by the agent, so Holon's git
    # must ignore global config too.
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    repo = make_repo()
    tracked = (repo / "tracked.txt").read_text()
    names = sorted(p.name for p in repo.iterdir())
    marker, cmd = _pwn(tmp_path)
    spec = spec_for(
        "plant_git_config",
        context={"env": {"MODE": "plant_git_config", "PWN_CMD": cmd, "PWN_WORKTREE": str(repo)}},
    )
    result = run_agent("plant_git_config", repo, spec=spec)
    assert result.status == "completed", result.notes
    assert not marker.exists()
    out = Path(result.output_path)
    patch = (out / "diff.patch").read_bytes()
    assert b"+agent line" in patch
    assert b"+* filter=pwn diff=pwn" in patch
    # Nothing beside the workspace is Holon's git state.
    beside = (out / "beside.txt").read_text().split()
    assert "runner" not in beside
    # core.worktree in the snapshot's config named the original: it was never used.
    assert (repo / "tracked.txt").read_text() == tracked
    assert sorted(p.name for p in repo.iterdir()) == names


def test_global_config_of_the_invoking_user_is_ignored(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    marker, cmd = _pwn(tmp_path)
    for path in (home / ".gitconfig", home / ".config" / "git" / "config"):
        path.write_text(f'[filter "pwn"]\n\tclean = {cmd}\n[core]\n\tattributesFile = {home}/a\n')
    (home / "a").write_text("* filter=pwn\n")
    repo = make_repo()  # before HOME moves: the test's own git would run the filter
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    snap = _snap(repo, tmp_path)
    (snap.root / "tracked.txt").write_text("edited\n")
    assert b"+edited" in snap.diff()
    assert not marker.exists()


# --- The original object store is neither written nor read beyond what the snapshot carries ---


def test_agent_cannot_write_into_the_original_object_store(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    before = _objects_listing(repo)
    result = run_agent("write_objects", repo)
    assert result.status == "completed"
    assert _objects_listing(repo) == before
    assert not (repo / ".git" / "objects" / "intruder").exists()
    written = (Path(result.output_path) / "written.txt").read_text().splitlines()
    # Whatever the agent could write (its own run's pack directory, in the local runtime) is
    # not the original store.
    for path in written:
        assert Path(path).resolve() != (repo / ".git" / "objects").resolve()


def test_snapshot_store_is_not_a_link_to_the_original(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    snap = _snap(repo, tmp_path)
    store = tmp_path / "run" / OBJECTS_LINK
    assert not store.is_symlink()
    alternates = (snap.root / ".git" / "objects" / "info" / "alternates").read_text()
    assert str(repo) not in alternates


def _dangling_secret(repo: Path) -> tuple[str, str]:
    """A `.env` added to the index and then removed: its blob stays in the original store."""
    text = "API_KEY=hostile-corpus-dangling-secret-0123456789"
    (repo / ".env").write_text(text + "\n")
    git(repo, "add", ".env")
    sha = git(repo, "rev-parse", ":.env").strip()
    git(repo, "rm", "-q", "--cached", ".env")
    (repo / ".env").unlink()
    assert git(repo, "cat-file", "-t", sha) == "blob\n"
    return sha, text


def test_dangling_blob_of_the_original_is_not_readable_from_the_snapshot(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    sha, _ = _dangling_secret(repo)
    # An unreachable commit (reset away, reflog not carried) is left behind too.
    (repo / "tracked.txt").write_text("abandoned\n")
    git(repo, "commit", "-q", "-am", "abandoned")
    abandoned = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "reset", "-q", "--hard", "HEAD~")
    snap = _snap(repo, tmp_path)
    ws = snap.root
    for obj in (sha, abandoned):
        proc = subprocess.run(["git", "cat-file", "-e", obj], cwd=ws, capture_output=True)
        assert proc.returncode != 0, obj
    # What the snapshot carries is all there.
    assert git(ws, "cat-file", "-t", "HEAD") == "commit\n"
    assert git(ws, "cat-file", "-t", ":tracked.txt") == "blob\n"


def test_agent_reading_a_dangling_blob_by_id_finds_nothing(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    sha, text = _dangling_secret(repo)
    spec = spec_for(
        "read_object",
        context={"env": {"MODE": "read_object", "SECRET_SHA": sha, "SECRET_TEXT": text}},
    )
    result = run_agent("read_object", repo, spec=spec, keep_workspace=True)
    assert result.status == "completed"
    out = Path(result.output_path)
    assert (out / "found.txt").read_text() == ""
    note = next(n for n in result.notes if n.startswith("workspace kept at "))
    kept = Path(note.removeprefix("workspace kept at "))
    proc = subprocess.run(
        ["git", f"--git-dir={kept / '.git'}", "cat-file", "-e", sha], capture_output=True
    )
    assert proc.returncode != 0
    assert git(kept, "cat-file", "-t", "HEAD") == "commit\n"


# --- Nested repositories: carried as files, never a gitlink, never a host path opened ----------


def test_git_init_in_a_subdirectory_is_carried_in_the_patch(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    host = make_repo("host-secret-repo", dirty=False)
    host_head = git(host, "rev-parse", "HEAD").strip()
    spec = spec_for(
        "nested_repos", context={"env": {"MODE": "nested_repos", "HOST_REPO": str(host / ".git")}}
    )
    result = run_agent("nested_repos", repo, spec=spec)
    assert result.status == "completed"
    assert result.patch.source == "runner"
    assert result.patch.error is None
    patch_path = Path(result.output_path) / "diff.patch"
    patch = patch_path.read_bytes()
    assert b"Subproject commit" not in patch
    assert host_head.encode() not in patch
    assert b"/.git" not in patch
    applied = _apply(repo, patch_path, tmp_path)
    assert (applied / "app" / "src" / "main.py").read_text() == 'print("scaffolded")\n'
    assert (applied / "app" / "README.md").read_text() == "# App\n"
    assert (applied / "linked" / "notes.txt").read_text() == "linked file\n"
    assert not (applied / "linked" / ".git").exists()
    assert (applied / "tracked.txt").read_text().endswith("agent line\n")


@pytest.mark.parametrize("kind", ["gitfile", "symlink"])
def test_nested_git_entry_naming_a_host_repository_is_never_opened(
    kind: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    host = make_repo("host-secret-repo", dirty=False)
    marker, cmd = _pwn(tmp_path)
    git(host, "config", "core.fsmonitor", cmd)
    host_head = git(host, "rev-parse", "HEAD").strip()
    snap = _snap(repo, tmp_path)
    nested = snap.root / "vendored"
    nested.mkdir()
    (nested / "code.c").write_text("int main;\n")
    if kind == "gitfile":
        (nested / ".git").write_text(f"gitdir: {host / '.git'}\n")
    else:
        os.symlink(host / ".git", nested / ".git")
    patch = snap.diff()
    assert b"+int main;" in patch
    assert host_head.encode() not in patch
    assert b"Subproject" not in patch
    assert b"vendored/.git" not in patch
    assert not marker.exists()


def test_edit_inside_a_submodule_is_not_lost(run_agent: Callable[..., Any], tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    git(inner, "init", "-q", "-b", "main")
    (inner / "f.txt").write_text("inner\n")
    git(inner, "add", "f.txt")
    git(inner, "commit", "-q", "-m", "inner")
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    (outer / "a.txt").write_text("a\n")
    git(outer, "add", "a.txt")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    git(outer, "commit", "-q", "-m", "with submodule")
    result = run_agent("edit_submodule", outer)
    assert result.status == "completed"
    patch_path = Path(result.output_path) / "diff.patch"
    assert b"+agent edit" in patch_path.read_bytes()
    applied = _apply(outer, patch_path, tmp_path)
    assert (applied / "sub" / "f.txt").read_text() == "inner\nagent edit\n"


def test_changes_git_cannot_record_fail_the_run_instead_of_vanishing(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    result = run_agent("unrecordable_path", make_repo())
    assert result.status == "failed"
    assert result.outcome == "failure"
    assert "cannot be recorded" in result.reason
    assert result.patch.path is None
