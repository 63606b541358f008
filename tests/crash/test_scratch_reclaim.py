"""A process killed mid-run leaves its scratch: the pull request's head checked out as a git
worktree (`holon-head-*`, registered in the workspace's repository) and the run's context
(`holon-context-*`). Here real child processes make them and are SIGKILLed (the worktree's at
its crash point, `workspace.worktree:after`), as a long-running `holon serve` would see; the
next start (a run handler made, or a head checked out again) removes them and git forgets the
worktree, while a live process's scratch, a link, a name Holon does not make and an owner whose
pid now runs another process are each handled as they must be (holon/executor/scratch.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from holon.crashpoints import CRASH_ENV
from holon.executor.handlers import RunSkillHandler
from holon.executor.scratch import OWNER, OWNERLESS_AFTER, start_time
from holon.executor.workspace import Head, head_workspace

KILLED_HEAD = """
import os, sys
from pathlib import Path
from holon import crashpoints
from holon.executor.workspace import Head, head_workspace
crashpoints.arm(os.environ)
with head_workspace(Path(sys.argv[1]), Head(sys.argv[2], True), token=None, server_url="x"):
    pass
"""
KILLED_CONTEXT = """
import os, signal
from holon.executor.scratch import CONTEXT, make_scratch
(make_scratch(CONTEXT) / "context").mkdir()
os.kill(os.getpid(), signal.SIGKILL)
"""
LIVE = """
import sys
from holon.executor.scratch import HEAD, make_scratch
print(make_scratch(HEAD), flush=True)
sys.stdin.read()
"""


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def repository(root: Path) -> tuple[Path, str]:
    work = root / "workspace"
    work.mkdir()
    git(work, "init", "-q")
    (work / "a.txt").write_text("a\n")
    git(work, "add", "a.txt")
    git(work, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "a")
    return work, git(work, "rev-parse", "HEAD").strip()


def child(code: str, tmpdir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    run_env = {**os.environ, "TMPDIR": str(tmpdir), **env}
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=run_env, capture_output=True, text=True
    )


def scratch(tmpdir: Path) -> set[str]:
    return {p.name for p in tmpdir.iterdir() if p.name.startswith("holon-")}


def worktrees(work: Path) -> int:
    return git(work, "worktree", "list", "--porcelain").count("worktree ")


def handler(work: Path, tmp: Path) -> RunSkillHandler:
    return RunSkillHandler(
        workspace=work,
        output_root=tmp / "runs",
        clock=lambda: datetime.now(UTC),
        runtime="local",
        agent=None,
        image=None,
        describe=lambda name: name,
    )


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="start times need /proc")
def test_a_killed_runs_scratch_is_reclaimed_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    work, sha = repository(tmp_path)
    # Killed with its worktree registered, and killed with its context half written.
    head = child(KILLED_HEAD, tmpdir, str(work), sha, **{CRASH_ENV: "workspace.worktree:after"})
    assert head.returncode == -signal.SIGKILL, head.stderr
    context = child(KILLED_CONTEXT, tmpdir)
    assert context.returncode == -signal.SIGKILL, context.stderr
    killed = scratch(tmpdir)
    assert len(killed) == 2, killed
    assert worktrees(work) == 2  # git still has the dead run's worktree
    # A live process's, and one whose pid now runs another process (its start time differs).
    live = subprocess.Popen(
        [sys.executable, "-c", LIVE],
        env={**os.environ, "TMPDIR": str(tmpdir)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert live.stdout is not None
        kept = Path(live.stdout.readline().strip()).name
        reused = tmpdir / "holon-context-reused01"
        reused.mkdir()
        started = start_time(live.pid)
        (reused / OWNER).write_text(f"{live.pid} {int(started or 0) + 1}\n")
        # Never Holon's to remove: a link to a dead owner's directory, a name it does not make.
        victim = tmp_path / "victim"
        victim.mkdir()
        (victim / OWNER).write_text(f"{head_pid_dead()} -\n")
        link = tmpdir / "holon-head-alink001"
        link.symlink_to(victim, target_is_directory=True)
        old = datetime.now(UTC).timestamp() - 3 * OWNERLESS_AFTER  # ownerless and old: a link
        os.utime(link, (old, old), follow_symlinks=False)
        foreign = tmpdir / "holon-head-notours"  # 7 characters: not a name mkdtemp makes
        foreign.mkdir()
        (foreign / OWNER).write_text(f"{head_pid_dead()} -\n")

        # Without an owner file (made before owner files, or killed before writing it): an
        # old one goes, a fresh one may be another process's, just made: kept.
        (tmpdir / "holon-context-old00001").mkdir()
        os.utime(tmpdir / "holon-context-old00001", (old, old))
        (tmpdir / "holon-context-new00001").mkdir()

        monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
        handler(work, tmp_path)  # a serve starting: its run handler is made

        left = scratch(tmpdir)
        assert not killed & left, left
        assert not {"holon-context-reused01", "holon-context-old00001"} & left, left
        assert {kept, "holon-head-alink001", "holon-head-notours", "holon-context-new00001"} <= left
        assert (victim / OWNER).is_file()
        assert worktrees(work) == 1, git(work, "worktree", "list")  # git forgot it too
        # A head checked out again, beside the live one: made, then removed; the live kept.
        with head_workspace(work, Head(sha, True), token=None, server_url="x") as tree:
            assert (tree / "a.txt").is_file()
        assert kept in scratch(tmpdir)
    finally:
        live.communicate("")
    assert worktrees(work) == 1


def head_pid_dead() -> int:
    """The pid of a process that has ended (reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)
