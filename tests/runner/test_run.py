"""Real agents through both backends: the contract's outcomes, patch round trip, isolation."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, spec_for


def _tree_bytes(root: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file():
            continue
        files[str(path.relative_to(root))] = path.read_bytes()
    return files


def test_success_patch_round_trips_and_original_untouched(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo()
    before = _tree_bytes(repo)
    status_before = git(repo, "status", "--porcelain")
    result = run_agent("success", repo)

    assert result.status == "completed"
    assert result.outcome == "success"
    assert int(result.exit_code) == 0
    assert result.manifest is not None
    assert result.manifest.model_extra == {"future_field": {"kept": True}}
    assert result.patch.source == "runner"
    assert result.snapshot.kind == "git"
    assert result.snapshot.head == git(repo, "rev-parse", "HEAD").strip()
    assert result.closure.closure_outcome == "completed"
    assert result.closure.lifecycle_outcome == "finished"

    # The original workspace is byte-identical and git sees the same state.
    assert _tree_bytes(repo) == before
    assert git(repo, "status", "--porcelain") == status_before

    out = Path(result.output_path)
    patch = (out / "diff.patch").read_bytes()
    # The user's uncommitted work is context of the starting point, never part of the change.
    assert b"+user's uncommitted line" not in patch
    assert b"untracked.txt" not in patch
    assert b"GIT binary patch" in patch
    record = json.loads((out / "run.json").read_text())
    assert record["run_id"] == result.run_id
    assert record["exit_code"] == 0

    # git apply on a copy of the starting point reproduces the agent's tree exactly.
    start = tmp_path / "start"
    subprocess.run(["cp", "-a", f"{repo}/.", str(start)], check=True)
    subprocess.run(["git", "apply", "--binary", str(out / "diff.patch")], cwd=start, check=True)
    tree = _tree_bytes(start)
    assert tree["tracked.txt"] == b"line 1\nuser's uncommitted line\nagent line\n"
    assert tree["added.txt"] == b"brand new\n"
    assert "doomed.txt" not in tree
    assert tree["image.bin"] == b"\x00\x01\x02\xffbinary\x00tail"
    assert tree["sub/dir/file.txt"] == b"nested\n"
    # The user's own work is in the starting point, untouched by the patch.
    assert tree["untracked.txt"] == b"user's untracked file\n"


@pytest.mark.parametrize(
    ("mode", "status", "outcome", "code", "reason", "lifecycle"),
    [
        ("fail", "failed", "failure", 1, "tests did not pass", "failed"),
        ("needs_human", "completed", "needs_human", 2, "Which database", "askuserQuestion"),
        ("needs_human_exit1", "completed", "needs_human", 2, "Proceed?", "askuserQuestion"),
        ("lying", "failed", "failure", 1, "exited with 1 although its manifest says", "failed"),
        ("no_manifest", "failed", "failure", 1, "manifest.json: missing", "failed"),
        ("bad_json", "failed", "failure", 1, "invalid JSON", "failed"),
        ("bad_schema", "failed", "failure", 1, "status", "failed"),
        ("still_running", "failed", "failure", 1, "still says status=running", "failed"),
    ],
)
def test_outcomes(
    run_agent: Callable[..., Any],
    make_repo: Callable[..., Path],
    mode: str,
    status: str,
    outcome: str,
    code: int,
    reason: str,
    lifecycle: str,
) -> None:
    result = run_agent(mode, make_repo(dirty=False))
    assert (result.status, result.outcome, int(result.exit_code)) == (status, outcome, code)
    assert reason in result.reason
    # The run's closure comes from the same derivation as everything else; the exit code stays
    # the contract's.
    assert result.closure.lifecycle_outcome == lifecycle
    assert result.closure.exit_code == code
    assert (Path(result.output_path) / "run.json").is_file()
    assert (result.manifest is None) == (mode in ("no_manifest", "bad_json", "bad_schema"))


def test_timeout_kills_agent_and_children(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    started = time.monotonic()
    result = run_agent("sleep", make_repo(dirty=False), timeout=1.5)
    assert time.monotonic() - started < 15
    assert result.status == "timed_out"
    assert int(result.exit_code) == 1
    assert result.agent_exit_code is None
    assert result.closure.lifecycle_outcome == "failed"
    _assert_ticks_stopped(Path(result.output_path) / "ticks")


def test_child_outliving_the_agent_is_killed(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    result = run_agent("orphan", make_repo(dirty=False))
    assert result.status == "completed"
    _assert_ticks_stopped(Path(result.output_path) / "ticks")


def _assert_ticks_stopped(ticks: Path) -> None:
    time.sleep(0.3)
    size = ticks.stat().st_size if ticks.exists() else 0
    time.sleep(0.6)
    after = ticks.stat().st_size if ticks.exists() else 0
    assert after == size, "a process of the agent is still writing after the run returned"


def test_appending_agent_leaves_original_byte_identical(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    repo = make_repo()
    original = (repo / "tracked.txt").read_bytes()
    inode = (repo / "tracked.txt").stat().st_ino
    result = run_agent("append", repo)
    assert result.status == "completed"
    assert (repo / "tracked.txt").read_bytes() == original
    assert (repo / "tracked.txt").stat().st_nlink == 1
    assert (repo / "tracked.txt").stat().st_ino == inode
    patch = (Path(result.output_path) / "diff.patch").read_text()
    assert "+appended by agent" in patch
    assert "+user's uncommitted line" not in patch


def test_required_artifact_missing_is_failure(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    spec = spec_for("success", output={"artifacts": [{"path": "report.html", "required": True}]})
    result = run_agent("success", make_repo(dirty=False), spec=spec)
    assert result.status == "failed"
    assert result.missing_artifacts == ["report.html"]
    assert "report.html" in result.reason


def test_legacy_required_patch_satisfied_by_runner(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    spec = spec_for("success", version="v0.1", output={"artifacts": ["diff.patch", "summary.md"]})
    result = run_agent("success", make_repo(dirty=False), spec=spec)
    assert result.status == "completed", result.reason
    assert result.missing_artifacts == []


def test_inspect_layout_and_env(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic import SecretStr

    result = run_agent(
        "inspect", make_repo(), secrets={"SECRET_TOKEN": SecretStr("ghp_thisisatesttoken")}
    )
    out = Path(result.output_path)
    env = dict(line.split("=", 1) for line in (out / "env.txt").read_text().splitlines())
    assert env["MODE"] == "inspect"
    # The agent got the value; the output directory (published as the runs artifact) does not
    # keep it: the runner redacted the file the agent wrote it into, and says so.
    assert env["SECRET_TOKEN"] == "***"
    assert any("forwarded secrets redacted in the output" in n for n in result.notes)
    assert "ghp_thisisatesttoken" not in (out / "run.json").read_text()
    if run_agent.runtime == "docker":  # type: ignore[attr-defined]
        assert env["HOLON_INPUT_DIR"] == "/holon/input"
        assert env["HOLON_WORKSPACE_DIR"] == "/holon/workspace"
        assert env["HOLON_OUTPUT_DIR"] == "/holon/output"
    else:
        assert Path(env["HOLON_OUTPUT_DIR"]) == out.absolute()
        assert env["HOLON_WORKSPACE_DIR"].endswith("/workspace")
    listing = (out / "workspace.txt").read_text().split()
    assert {"tracked.txt", "untracked.txt", ".git"} <= set(listing)
    assert "debug.log" not in listing
    assert "build" not in listing
    # The borrowed object store is reachable where the snapshot's alternates say.
    assert (
        "pack" in (out / "objects.txt").read_text().split()
        or "info" in (out / "objects.txt").read_text().split()
    )


def test_include_ignored_copies_ignored_files(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    result = run_agent("inspect", make_repo(), include_ignored=True)
    listing = (Path(result.output_path) / "workspace.txt").read_text().split()
    assert {"debug.log", "build"} <= set(listing)


def test_non_git_workspace(run_agent: Callable[..., Any], tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "tracked.txt").write_text("plain\n")
    (plain / "doomed.txt").write_text("x\n")
    result = run_agent("success", plain)
    assert result.status == "completed"
    assert result.snapshot.kind == "directory"
    patch = (Path(result.output_path) / "diff.patch").read_text()
    assert "+agent line" in patch
    assert "deleted file mode" in patch
    assert (plain / "tracked.txt").read_text() == "plain\n"
