"""holon/executor/workspace.py through `RunSkillHandler`, with real git repositories: a run on a
pull request works on the pull request's head, whatever the workspace has checked out. A head
the workspace holds gets a detached worktree (removed after the run); one it lacks is fetched
from a real `origin` on disk, exactly that commit, for a pull request of this repository only,
the token reaching git as configuration in its environment and nowhere else; a fork's head is
never checked out or fetched; a head that cannot be had fails the run with one line."""

from __future__ import annotations

import base64
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.executor.handlers import RunSkillHandler
from holon.executor.workspace import head_of, token_applies
from holon.intent import ActionIntent, Target, make_intent
from holon.skills.catalog import default_catalog
from tests.conftest import git
from tests.executor.conftest import AT, REPO, clock

TOKEN = "ghs_" + "7" * 36
BASIC = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
# Appends a line to tracked.txt: its patch's context is whatever tree the run started from.
AGENT = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
with (ws / "tracked.txt").open("a") as f:
    f.write("the agent's line\\n")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def _pr_intent(args: dict[str, Any]) -> ActionIntent:
    return make_intent(
        type_="run_skill",
        target=Target(repo=REPO, kind="pull_request", id="2"),
        args={"skill": "github-pr-fix", "inputs": {"pull_request": "2"}, **args},
        reason="test",
        decider="test",
        event_key="k",
        event_id="evt_1",
        at=AT,
        skills=default_catalog().names(),
    )


def _handler(tmp_path: Path, workspace: Path, token: str | None = TOKEN) -> RunSkillHandler:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    return RunSkillHandler(
        workspace=workspace,
        output_root=tmp_path / "runs",
        clock=clock,
        runtime="local",
        agent=[sys.executable, str(script)],
        image=None,
        describe=lambda skill: f"the goal of {skill}",
        token=lambda: token,
        server_url="https://github.com",
    )


def _origin(tmp_path: Path, make_repo: Callable[..., Path]) -> tuple[Path, str, str]:
    """A bare `origin` holding main and a pull request's branch `feature` (one more commit,
    tracked.txt changed); its path, main's sha and the head's."""
    src = make_repo("src", dirty=False)
    main = git(src, "rev-parse", "HEAD").strip()
    git(src, "checkout", "-q", "-b", "feature")
    (src / "tracked.txt").write_text("line 1\nthe pull request's line\n")
    git(src, "commit", "-q", "-am", "the pull request's change")
    head = git(src, "rev-parse", "HEAD").strip()
    git(tmp_path, "clone", "-q", "--bare", str(src), "origin.git")
    return tmp_path / "origin.git", main, head


def _checkout_main(tmp_path: Path, origin: Path, *, shallow: bool) -> Path:
    """The workflow's checkout: main only (as actions/checkout fetches it), so the pull
    request's head is not in it."""
    depth = ["--depth=1"] if shallow else []
    url = f"file://{origin}" if shallow else str(origin)
    git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "--branch", "main", *depth,
        url, "ws")  # fmt: skip
    return tmp_path / "ws"


def _has(workspace: Path, sha: str) -> bool:
    import subprocess

    done = subprocess.run(
        ["git", "cat-file", "-e", f"{sha}^{{commit}}"], cwd=workspace, capture_output=True
    )
    return done.returncode == 0


def _record(result_path: str | None) -> dict[str, Any]:
    assert result_path is not None
    loaded: dict[str, Any] = json.loads((Path(result_path) / "run.json").read_text())
    return loaded


def _git_logger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`git` on PATH logging, for each fetch, its argv and the `http.extraheader` git's own
    configuration holds then (read by git itself, from the environment it was given)."""
    real = next(
        Path(d) / "git"
        for d in os.environ["PATH"].split(os.pathsep)
        if (Path(d) / "git").is_file() and os.access(Path(d) / "git", os.X_OK)
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git-fetch.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do if [ "$a" = fetch ]; then\n'
        f'  printf "argv: %s\\n" "$*" >> {log}\n'
        f'  printf "env-keys: %s\\n" "$GIT_CONFIG_KEY_0" >> {log}\n'
        f"  printf 'header: ' >> {log}\n"
        f"  {real} config --get-all http.extraheader >> {log}\n"
        "fi; done\n"
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _files_holding(root: Path, *needles: str) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(n.encode() in data for n in needles):
                found.append(path)
    return found


def _no_worktree_left(workspace: Path) -> None:
    listed = git(workspace, "worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 1, listed
    assert not (workspace / ".git" / "worktrees").exists() or not any(
        (workspace / ".git" / "worktrees").iterdir()
    )


def test_a_head_the_workspace_holds_is_checked_out_for_the_run_only(
    tmp_path: Path, make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    origin, main, head = _origin(tmp_path, make_repo)
    ws = _checkout_main(tmp_path, origin, shallow=False)
    git(ws, "fetch", "-q", "origin", "feature")  # the head is here, main checked out
    assert git(ws, "rev-parse", "HEAD").strip() == main
    log = _git_logger(tmp_path, monkeypatch)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()

    result = _handler(tmp_path, ws)(_pr_intent({"head_sha": head, "head_repo": "same"}), 1)

    assert result.status == "succeeded", result.error
    record = _record(result.run_output_path)
    assert record["snapshot"]["head"] == head  # what publishing takes as the patch's base
    patch = (Path(str(result.run_output_path)) / "diff.patch").read_text()
    assert " the pull request's line\n+the agent's line\n" in patch  # context: the head
    git(ws, "worktree", "add", "-q", "--detach", str(tmp_path / "check"), head)
    git(
        tmp_path / "check",
        "apply",
        "--check",
        str(Path(str(result.run_output_path)) / "diff.patch"),
    )
    git(ws, "worktree", "remove", "--force", str(tmp_path / "check"))
    # Nothing fetched; the workspace is untouched; the worktree and its directory are gone.
    assert not log.exists()
    assert git(ws, "rev-parse", "HEAD").strip() == main
    assert (ws / "tracked.txt").read_text() == "line 1\n"
    _no_worktree_left(ws)
    assert not [p for p in (tmp_path / "tmp").iterdir() if p.name.startswith("holon-head-")]


@pytest.mark.parametrize("shallow", [True, False], ids=["shallow", "full"])
def test_a_missing_head_is_fetched_from_origin_with_the_token_only_in_gits_environment(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    shallow: bool,
) -> None:
    origin, main, head = _origin(tmp_path, make_repo)
    ws = _checkout_main(tmp_path, origin, shallow=shallow)
    assert not _has(ws, head)
    log = _git_logger(tmp_path, monkeypatch)

    result = _handler(tmp_path, ws)(_pr_intent({"head_sha": head, "head_repo": "same"}), 1)

    assert result.status == "succeeded", result.error
    assert _record(result.run_output_path)["snapshot"]["head"] == head
    assert _has(ws, head)
    # The header reached git's configuration through its environment, never its argv.
    text = log.read_text()
    assert f"header: AUTHORIZATION: basic {BASIC}\n" in text
    assert "env-keys: http.extraheader\n" in text
    argv = [line for line in text.splitlines() if line.startswith("argv: ")]
    assert len(argv) == 1
    depth = " --depth=1" if shallow else ""
    wanted = "fetch --quiet --no-tags --no-recurse-submodules --no-write-fetch-head"
    assert argv[0].endswith(f"{wanted}{depth} origin {head}")
    assert TOKEN not in argv[0]
    assert BASIC not in argv[0]
    # ... and in no file: the workspace (its repository, config, worktree records), origin,
    # the run's output.
    for root in (ws, origin, tmp_path / "runs"):
        assert _files_holding(root, TOKEN, BASIC) == [], root
    assert "extraheader" not in (ws / ".git" / "config").read_text()
    assert git(ws, "rev-parse", "HEAD").strip() == main
    assert git(ws, "rev-parse", "--is-shallow-repository").strip() == str(shallow).lower()
    _no_worktree_left(ws)


@pytest.mark.parametrize("present", [True, False], ids=["present", "absent"])
def test_a_forks_head_is_never_checked_out_or_fetched(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    present: bool,
) -> None:
    origin, main, head = _origin(tmp_path, make_repo)
    ws = _checkout_main(tmp_path, origin, shallow=False)
    if present:
        git(ws, "fetch", "-q", "origin", "feature")
    log = _git_logger(tmp_path, monkeypatch)

    result = _handler(tmp_path, ws)(_pr_intent({"head_sha": head, "head_repo": "fork"}), 1)

    # The run sees the pull request through its context; its tree is the workflow's.
    assert result.status == "succeeded", result.error
    assert _record(result.run_output_path)["snapshot"]["head"] == main
    assert not log.exists()
    assert _has(ws, head) is present
    _no_worktree_left(ws)


def test_a_head_of_unknown_home_is_not_fetched_and_the_run_fails_in_one_line(
    tmp_path: Path, make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    origin, _, head = _origin(tmp_path, make_repo)
    ws = _checkout_main(tmp_path, origin, shallow=False)
    log = _git_logger(tmp_path, monkeypatch)

    result = _handler(tmp_path, ws)(_pr_intent({"head_sha": head}), 1)

    assert result.status == "failed"
    assert result.error == (
        f"the pull request's head {head} is not in the workspace: check it out or fetch it"
    )
    assert not log.exists()
    assert not _has(ws, head)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_head_origin_does_not_have_fails_the_run_in_one_line(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    origin, _, _ = _origin(tmp_path, make_repo)
    ws = _checkout_main(tmp_path, origin, shallow=False)
    gone = "b" * 40

    result = _handler(tmp_path, ws)(_pr_intent({"head_sha": gone, "head_repo": "same"}), 1)

    assert result.status == "failed"
    assert result.error is not None
    assert result.error.startswith(
        f"the pull request's head {gone} is not in the workspace: check it out or fetch it "
        "(fetching it failed: "
    )
    assert "\n" not in result.error
    assert TOKEN not in result.error
    assert BASIC not in result.error
    _no_worktree_left(ws)


def test_a_workspace_that_is_no_repository_is_used_as_it_is_with_no_base(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "tracked.txt").write_text("line 1\n")

    result = _handler(tmp_path, ws)(_pr_intent({"head_sha": "c" * 40, "head_repo": "same"}), 1)

    # No commit to be wrong about: the run records no base, so publishing refuses its patch.
    assert result.status == "succeeded", result.error
    snapshot = _record(result.run_output_path)["snapshot"]
    assert (snapshot["kind"], snapshot["head"]) == ("directory", None)


def test_a_head_that_is_no_commit_id_is_refused_before_git_sees_it(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    ws = make_repo("ws", dirty=False)
    for bad in ("--upload-pack=touch pwned", "main", "a" * 39, "A" * 40):
        result = _handler(tmp_path, ws)(_pr_intent({"head_sha": bad, "head_repo": "same"}), 1)
        assert result.status == "failed"
        assert result.error is not None
        assert "is not a full commit id" in result.error
    assert not (ws / "pwned").exists()


def test_runs_not_on_a_pull_request_keep_the_serves_workspace() -> None:
    issue = make_intent(
        type_="run_skill",
        target=Target(repo=REPO, kind="issue", id="1"),
        args={"skill": "github-issue-solve", "head_sha": "a" * 40},
        reason="test",
        decider="test",
        event_key="k",
        event_id="evt_1",
        at=AT,
        skills=default_catalog().names(),
    )
    assert head_of(issue) is None
    assert head_of(_pr_intent({})) is None
    assert head_of(_pr_intent({"head_sha": "a" * 40, "head_repo": "fork"})) is None
    found = head_of(_pr_intent({"head_sha": "a" * 40, "head_repo": "same"}))
    assert found is not None
    assert (found.sha, found.same_repo) == ("a" * 40, True)


@pytest.mark.parametrize(
    ("origin", "applies"),
    [
        ("https://github.com/octo/repo", True),
        ("https://github.com/octo/repo.git", True),
        ("https://evil.example/octo/repo", False),
        ("https://github.com.evil.example/octo/repo", False),
        ("https://github.com:8443/octo/repo", False),
        ("http://github.com/octo/repo", False),
        ("git@github.com:octo/repo.git", False),
        ("ssh://git@github.com/octo/repo", False),
        ("ext::sh -c touch% /tmp/x", False),
        ("/srv/mirror/repo.git", True),
        ("../mirror.git", True),
        ("file:///srv/mirror/repo.git", True),
    ],
)
def test_the_token_goes_only_to_the_github_server_or_a_local_path(
    origin: str, applies: bool
) -> None:
    assert token_applies(origin, "https://github.com") is applies


def test_gits_message_never_carries_the_token(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    ws = make_repo("ws", dirty=False)
    # An origin whose URL holds the token (as a careless checkout might): git names it.
    git(ws, "remote", "add", "origin", f"https://x-access-token:{TOKEN}@127.0.0.1:9/o/r.git")
    gone = "d" * 40

    result = _handler(tmp_path, ws)(_pr_intent({"head_sha": gone, "head_repo": "same"}), 1)

    assert result.status == "failed"
    assert result.error is not None
    assert "(fetching it failed: " in result.error
    assert TOKEN not in result.error
    assert BASIC not in result.error
