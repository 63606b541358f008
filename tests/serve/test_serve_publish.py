"""`holon serve` end to end, as its own process, with a token against the loopback GitHub and a
real local agent: `/holon solve` on an issue runs the agent, the settled run becomes
`holon.run.settled`, the default policy publishes it, and the issue gets one commit on
`holon/issue-1` and a draft pull request (docs/github.md, "Wiring")."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from holon.cli.serve_cmd import CRASH_ENV
from tests.gateway.conftest import example
from tests.github.publish_support import seed
from tests.serve.conftest import holon_argv, serve_env
from tests.serve.github_serve import hold_triggers, holon_comments

REPO = "octocat/Hello-World"
TOKEN = "ghs_" + "f" * 36  # the github_server fixture's token
HOLON = "github-actions[bot]"
AGENT = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(ws / "tracked.txt").write_text("line 1\\nfixed by the agent\\n")
(out / "summary.md").write_text("Fixed it.")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def _solve_comment() -> dict[str, Any]:
    payload = example("issue_comment", "created")
    payload["comment"].update(id=7, body="/holon solve", author_association="OWNER")
    payload["repository"]["full_name"] = REPO
    payload["issue"]["number"] = 1
    return {"event": "issue_comment", "delivery": "d-7", "payload": payload}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _published_setup(
    github_server: Any, tmp_path: Path, workspace: Path, agent_source: str = AGENT
) -> Any:
    """The issue, GitHub holding the workspace's commit, `agent_source` as the agent and the
    replay; returns a function running serve on them (with extra arguments and environment)."""
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start", user="octocat")
    base = seed(repo, {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()})
    head = subprocess.run(
        ["git", "-C", str(workspace), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    # GitHub holds the commit the workspace is at (in Actions the checkout came from it).
    repo.objects[head] = repo.objects[base]
    repo.refs["heads/main"] = head
    agent = tmp_path / "agent.py"
    agent.write_text(agent_source)
    replay = tmp_path / "replay.ndjson"
    replay.write_text(json.dumps(_solve_comment()) + "\n")
    hold_triggers(github_server, [_solve_comment()])
    state = tmp_path / "s"

    def run(*extra: str, **more_env: str) -> subprocess.CompletedProcess[str]:
        env = serve_env(
            GITHUB_TOKEN=TOKEN,
            GITHUB_API_URL=github_server.url,
            HOLON_GITHUB_LOGIN=HOLON,
            HOLON_GITHUB_WRITE_SPACING="0",
            **more_env,
        )
        argv = holon_argv(
            "serve", "--state-dir", str(state), "--replay", str(replay), "--once",
            "--repo", REPO, "--workspace", str(workspace),
            "--agent", shlex.join([sys.executable, str(agent)]), *extra,
        )  # fmt: skip
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)

    return run


def test_serve_publishes_a_solved_issue_as_a_draft_pull_request(
    github_server: Any, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    repo = github_server.state.repos[REPO]
    run = _published_setup(github_server, tmp_path, make_repo(dirty=False))
    state = tmp_path / "s"
    done = run()
    assert done.returncode == 0, done.stderr
    events = [e["type"] for e in _lines(state / "events.ndjson") if "type" in e]
    assert events == ["github.issue_comment.created", "holon.run.settled"]
    skills = [
        i["args"]["skill"] for d in _lines(state / "decisions.ndjson") for i in d["intents"]
    ]  # fmt: skip
    assert skills == ["github-issue-solve", "github-publish"]
    (pull,) = [i for i in repo.issues.values() if i.pull is not None]
    assert pull.pull is not None
    assert (pull.pull.head, pull.pull.base, pull.pull.draft) == ("holon/issue-1", "main", True)
    commit = repo.refs["heads/holon/issue-1"]
    data = repo.objects[repo.files(commit)["tracked.txt"]["sha"]]["data"]
    assert data == b"line 1\nfixed by the agent\n"
    published = _lines(state / "actions.ndjson")[-1]
    assert (published["output"]["number"], published["output"]["sha"]) == (pull.number, commit)
    assert published["run_outcome"] == "success"
    assert TOKEN not in done.stdout + done.stderr
    # One Holon comment for the solve the user asked for: its progress note, settled once, in
    # place, with the publishing's handoff (naming the pull request and the commit); never
    # `finished` before the pull request exists; publishing posts no comment of its own.
    (comment,) = holon_comments(repo, HOLON)
    assert comment.body.startswith(
        "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->"
    )
    assert f"[pull request \\#{pull.number}](https://github.com/{REPO}/pull/{pull.number})" in (
        comment.body
    )
    assert f"- commit {commit}" in comment.body
    assert github_server.count("issues/create-comment") == 1
    assert github_server.count("issues/update-comment") == 1


def _policy_publishing(directory: Path, **values: str) -> Path:
    """The built-in policy with `settings.publish` keys set to `values` (YAML text)."""
    built_in = Path(__file__).resolve().parents[2] / "holon/controller/default_policy.yaml"
    text = built_in.read_text()
    for key, value in values.items():
        text, count = re.subn(rf"(?m)^    {key}: [^#\n]*", f"    {key}: {value} ", text)
        assert count == 1, key
    path = directory / "publish-policy.yaml"
    path.write_text(text)
    return path


def test_the_policy_files_branch_template_and_workflow_permission_take_effect(
    github_server: Any, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    agent = AGENT + (
        "(ws / '.github' / 'workflows').mkdir(parents=True)\n"
        "(ws / '.github' / 'workflows' / 'ci.yml').write_text('on: push\\n')\n"
    )
    policy = _policy_publishing(
        tmp_path,
        branch_template='"bots/{number}/{kind}"',
        allow_workflow_changes="true",
        draft="false",
    )
    run = _published_setup(github_server, tmp_path, make_repo(dirty=False), agent)
    done, state = run("--policy", str(policy)), tmp_path / "s"
    assert done.returncode == 0, done.stderr
    repo = github_server.state.repos[REPO]
    assert "heads/holon/issue-1" not in repo.refs
    commit = repo.refs["heads/bots/1/issue"]
    files = repo.files(commit)
    assert repo.objects[files[".github/workflows/ci.yml"]["sha"]]["data"] == b"on: push\n"
    (pull,) = [i for i in repo.issues.values() if i.pull is not None]
    assert pull.pull is not None
    assert (pull.pull.head, pull.pull.draft) == ("bots/1/issue", False)
    published = _lines(state / "actions.ndjson")[-1]
    assert (published["status"], published["output"]["sha"]) == ("succeeded", commit)


def test_a_serve_killed_after_saving_a_settled_run_publishes_it_on_restart_once(
    github_server: Any, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    repo = github_server.state.repos[REPO]
    run = _published_setup(github_server, tmp_path, make_repo(dirty=False))
    state = tmp_path / "s"
    # Killed right after the checkpoint that saved the settled run, before its event was handled.
    crashed = run("--checkpoint-every", "1", **{CRASH_ENV: "after_checkpoint_before_follow_ups"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert github_server.count("pulls/create") == 0
    again = run()
    assert again.returncode == 0, again.stderr
    (pull,) = [i for i in repo.issues.values() if i.pull is not None]
    assert pull.pull is not None
    assert pull.pull.head == "holon/issue-1"
    assert github_server.count("pulls/create") == 1
    third = run()  # nothing left queued: nothing is published again
    assert third.returncode == 0, third.stderr
    assert github_server.count("pulls/create") == 1
    settled = [e for e in _lines(state / "events.ndjson") if e.get("type") == "holon.run.settled"]
    publishes = [
        d for d in _lines(state / "decisions.ndjson")
        if any(i["args"].get("skill") == "github-publish" for i in d["intents"])
    ]  # fmt: skip
    assert (len(settled), len(publishes)) == (1, 1)
    records = json.loads((state / "state.json").read_text())["records"]
    queued = [k for k, r in records.items() if k.startswith("meta:follow-up:")]
    assert queued
    assert all(records[k].get("deleted") for k in queued)
