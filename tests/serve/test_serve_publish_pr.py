"""`holon serve` publishing on a pull request, end to end as its own process, against the
loopback GitHub writing as an app (so the `Holon` check runs are Holon's own) and with a real
local agent: a maintainer's change request on a Holon PR is fixed and pushed on the PR's own
branch with replies to the threads it addressed, a `/holon review` is posted once per head, and a
fix whose PR moved meanwhile is refused with the reason on the PR (docs/github.md,
"Publishing")."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from holon.cli.serve_cmd import CRASH_ENV
from tests.gateway.conftest import example
from tests.github.publish_support import seed
from tests.serve.conftest import holon_argv, serve_env
from tests.serve.github_serve import hold_triggers, holon_comments, review_event
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.state import Issue, Pull, Repo

REPO = "octocat/Hello-World"
TOKEN = "ghs_" + "f" * 36
APP = "octoapp[bot]"  # the loopback GitHub's check runs are by its documented example's app
BRANCH = "holon/issue-1"
THREAD, OTHER = 10, 20  # the review threads on the pull request; the agent addresses THREAD
FIXER = f"""
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(ws / "tracked.txt").write_text("line 1\\nthe empty case handled\\n")
(out / "summary.md").write_text("Handled the empty case.")
(out / "pr-fix.json").write_text(json.dumps(
    {{"review_replies": [{{"comment_id": {THREAD}, "status": "fixed",
                          "message": "Handled: see the new line."}}],
     "checks": [], "verification": [{{"command": "true", "exit_code": 0}}]}}
))
(out / "manifest.json").write_text(json.dumps({{"status": "completed", "outcome": "success"}}))
"""
REVIEWER = """
import json, os, pathlib
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(out / "review.json").write_text(json.dumps([{"path": "tracked.txt", "line": 1,
    "severity": "nit", "message": "fine", "suggestion": ""}]))
(out / "review.md").write_text("Reads well.")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""
Serve = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def app_server() -> Iterator[LoopbackGitHub]:
    with LoopbackGitHub(token=TOKEN, login=APP) as server:
        yield server
    server.assert_clean()


def _pull(issue: Issue) -> Pull:
    assert issue.pull is not None
    return issue.pull


def _holon_pr(repo: Repo, workspace: Path) -> tuple[Issue, str]:
    """Issue 1 and Holon's pull request #2 from `holon/issue-1`, whose head is the commit the
    workspace is at (in Actions the checkout came from it), with two review threads."""
    repo.add_issue("Crash on start")
    main = repo.refs["heads/main"]
    base = seed(repo, {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()})
    repo.refs["heads/main"] = main
    head = subprocess.run(
        ["git", "-C", str(workspace), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    repo.objects[head] = repo.objects[base]
    repo.refs[f"heads/{BRANCH}"] = head
    issue = repo.add_pull("Fix #1: Crash on start", head=BRANCH, user=APP)
    _pull(issue).review_comments += [
        {"id": THREAD, "body": "the empty case?", "user": "octocat", "path": "tracked.txt"},
        {"id": OTHER, "body": "naming", "user": "octocat", "path": "tracked.txt"},
    ]
    for comment in _pull(issue).review_comments:
        comment["line"] = 1
    return issue, head


def _server(server: LoopbackGitHub, tmp_path: Path, workspace: Path, agent: str) -> Serve:
    """A function running serve once on `lines` (with a state directory and environment)."""
    script = tmp_path / "agent.py"
    script.write_text(agent)

    def run(
        lines: list[dict[str, Any]], *extra: str, state: str = "s", **env: str
    ) -> subprocess.CompletedProcess[str]:
        replay = tmp_path / f"{state}-replay.ndjson"
        replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
        hold_triggers(server, lines)
        argv = holon_argv(
            "serve", "--state-dir", str(tmp_path / state), "--replay", str(replay), "--once",
            "--repo", REPO, "--workspace", str(workspace),
            "--agent", shlex.join([sys.executable, str(script)]), *extra,
        )  # fmt: skip
        environment = serve_env(
            GITHUB_TOKEN=TOKEN,
            GITHUB_API_URL=server.url,
            HOLON_GITHUB_LOGIN=APP,
            HOLON_GITHUB_WRITE_SPACING="0",
            **env,
        )
        return subprocess.run(argv, env=environment, capture_output=True, text=True, timeout=120)

    return run


def _changes_requested(head: str) -> dict[str, Any]:
    """A maintainer (Codertocat, OWNER) requests changes on pull request #2 at `head`."""
    return review_event(2, head, "changes_requested", "Please handle the empty case.")


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _skills(state: Path) -> list[str]:
    decisions = _lines(state / "decisions.ndjson")
    return [i["args"]["skill"] for d in decisions for i in d["intents"]]


def _holon_checks(repo: Repo) -> dict[str, list[dict[str, Any]]]:
    """Holon's check runs by head sha."""
    found: dict[str, list[dict[str, Any]]] = {}
    for run in repo.check_runs.values():
        if run["name"] == "Holon":
            found.setdefault(run["head_sha"], []).append(run)
    return found


def test_a_change_request_on_a_holon_pr_is_fixed_on_its_own_branch_with_replies(
    app_server: LoopbackGitHub, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    repo = app_server.state.repos[REPO]
    workspace = make_repo(dirty=False)
    issue, head = _holon_pr(repo, workspace)
    run = _server(app_server, tmp_path, workspace, FIXER)
    done = run([_changes_requested(head)])
    assert done.returncode == 0, done.stderr
    state = tmp_path / "s"
    assert _skills(state) == ["github-pr-fix", "github-publish"]
    # One commit on the pull request's own branch, on the head the run started from; the pull
    # request's head moved to it.
    fix = repo.refs[f"heads/{BRANCH}"]
    assert repo.get(fix, "commit")["parents"] == [head]
    assert repo.get(fix, "commit")["message"].startswith("Address feedback on #2\n")
    data = repo.objects[repo.files(fix)["tracked.txt"]["sha"]]["data"]
    assert data == b"line 1\nthe empty case handled\n"
    assert _pull(issue).head_sha == fix
    assert set(repo.refs) == {"heads/main", f"heads/{BRANCH}"}  # no other branch, no new PR
    assert [i.number for i in repo.issues.values() if i.pull is not None] == [2]
    # The thread the fix addressed got one reply naming the commit; the other none.
    replies = [c for c in _pull(issue).review_comments if c.get("in_reply_to_id")]
    assert [(r["in_reply_to_id"], r["user"]) for r in replies] == [(THREAD, APP)]
    assert f"Addressed in {fix}." in replies[0]["body"]
    # One Holon comment on the pull request, the fix's, settled in place with the publishing.
    (comment,) = holon_comments(repo, APP)
    assert comment.body.startswith(
        "<!-- holon:v1 subject=pull_request:2 workflow=holon skill=github-pr-fix -->"
    )
    assert "**Outcome:** `finished`" in comment.body
    assert f"- commit {fix}" in comment.body
    # The check run of the head the fix started from is the fix's, completed with the
    # publishing's outcome; the new head carries the same outcome; publishing has none.
    checks = _holon_checks(repo)
    assert set(checks) == {head, fix}
    (old,), (new,) = checks[head], checks[fix]
    for check in (old, new):
        assert (check["status"], check["conclusion"]) == ("completed", "success")
        summary = check["output"]["summary"]
        assert "skill=github-pr-fix -->" in summary
        assert f"commit {fix}" in summary
    assert "github-publish" not in json.dumps(list(repo.check_runs.values()))
    published = _lines(state / "actions.ndjson")[-1]
    assert (published["status"], published["output"]["sha"]) == ("succeeded", fix)
    assert TOKEN not in done.stdout + done.stderr


def _review_comment(head: str | None = None) -> dict[str, Any]:
    """`/holon review` commented on pull request #2 by its owner."""
    payload = example("issue_comment", "created")
    payload["comment"].update(id=8, body="/holon review", author_association="OWNER")
    payload["issue"]["number"] = 2
    payload["issue"]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/2"}
    payload["repository"]["full_name"] = REPO
    return {"event": "issue_comment", "delivery": "d-8", "payload": payload}


def test_a_review_run_posts_one_review_for_the_head_however_often_it_is_replayed(
    app_server: LoopbackGitHub, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    repo = app_server.state.repos[REPO]
    workspace = make_repo(dirty=False)
    issue, head = _holon_pr(repo, workspace)
    run = _server(app_server, tmp_path, workspace, REVIEWER)
    first = run([_review_comment()])
    assert first.returncode == 0, first.stderr
    assert _skills(tmp_path / "s") == ["github-review", "github-publish"]
    (review,) = _pull(issue).reviews
    assert (review["user"], review["commit_id"], review["state"]) == (APP, head, "COMMENTED")
    assert "Reads well." in review["body"]
    (comment,) = holon_comments(repo, APP)
    assert "skill=github-review -->" in comment.body
    assert f"- review of {head}" in comment.body
    # The same delivery again: a duplicate, nothing runs.
    again = run([_review_comment()])
    assert again.returncode == 0, again.stderr
    assert _skills(tmp_path / "s") == ["github-review", "github-publish"]
    # A serve with a fresh state runs the review again, and publishing finds the review of
    # that head already there: still one review.
    fresh = run([_review_comment()], state="fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert _skills(tmp_path / "fresh") == ["github-review", "github-publish"]
    assert len(_pull(issue).reviews) == 1
    assert app_server.count("pulls/create-review") == 1
    published = _lines(tmp_path / "fresh" / "actions.ndjson")[-1]
    assert (published["status"], published["effect"]["performed"]) == ("succeeded", False)
    assert len(holon_comments(repo, APP)) == 1


def test_a_fix_whose_pull_request_moved_before_publishing_is_refused_on_the_pr(
    app_server: LoopbackGitHub, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    repo = app_server.state.repos[REPO]
    workspace = make_repo(dirty=False)
    issue, head = _holon_pr(repo, workspace)
    run = _server(app_server, tmp_path, workspace, FIXER)
    # The fix runs and settles; serve is killed before it publishes.
    crashed = run(
        [_changes_requested(head)],
        "--checkpoint-every",
        "1",
        **{CRASH_ENV: "after_checkpoint_before_follow_ups"},
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    # Meanwhile somebody pushes to the pull request's branch.
    theirs = repo.put_file("later.txt", b"pushed by someone\n", BRANCH)
    assert _pull(issue).head_sha == theirs
    again = run([])
    assert again.returncode == 1, again.stderr
    assert repo.refs[f"heads/{BRANCH}"] == theirs  # nothing pushed over it
    assert not [c for c in _pull(issue).review_comments if c.get("in_reply_to_id")]
    published = _lines(tmp_path / "s" / "actions.ndjson")[-1]
    assert published["status"] == "failed"
    assert published["error"].startswith(
        f"publish moved: pull request #2 moved: its head is {theirs[:12]}"
    )
    # The user sees why on the pull request: the fix's one comment and its check run failed.
    (comment,) = holon_comments(repo, APP)
    assert "skill=github-pr-fix -->" in comment.body
    assert "**Outcome:** `failed`" in comment.body
    assert "pull request \\#2 moved" in comment.body, comment.body
    (check,) = _holon_checks(repo)[head]
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "pull request \\#2 moved" in check["output"]["summary"]
    assert theirs not in _holon_checks(repo)  # nobody's outcome is put on their commit


def _answerer(status: str) -> str:
    """A pr-fix agent that changes nothing and answers THREAD with `status`."""
    return f"""
import json, os, pathlib
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(out / "summary.md").write_text("Nothing to change.")
(out / "pr-fix.json").write_text(json.dumps(
    {{"review_replies": [{{"comment_id": {THREAD}, "status": "{status}",
                          "message": "Kept as it is: the empty case cannot happen here."}}],
     "checks": [], "verification": [{{"command": "true", "exit_code": 0}}]}}
))
(out / "manifest.json").write_text(json.dumps({{"status": "completed", "outcome": "success"}}))
"""


def test_a_fix_that_changes_nothing_posts_its_replies_without_a_commit(
    app_server: LoopbackGitHub, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    repo = app_server.state.repos[REPO]
    workspace = make_repo(dirty=False)
    issue, head = _holon_pr(repo, workspace)
    done = _server(app_server, tmp_path, workspace, _answerer("wontfix"))(
        [_changes_requested(head)]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert repo.refs[f"heads/{BRANCH}"] == head  # no commit pushed
    replies = [c for c in _pull(issue).review_comments if c.get("in_reply_to_id")]
    assert [(r["in_reply_to_id"], r["user"]) for r in replies] == [(THREAD, APP)]
    assert f"Not changed in {head}, on purpose." in replies[0]["body"]


def test_a_fixed_reply_with_nothing_changed_is_refused_and_nothing_posted(
    app_server: LoopbackGitHub, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    repo = app_server.state.repos[REPO]
    workspace = make_repo(dirty=False)
    issue, head = _holon_pr(repo, workspace)
    done = _server(app_server, tmp_path, workspace, _answerer("fixed"))([_changes_requested(head)])
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"pr-fix.json says comment {THREAD} is fixed, but the run changed nothing" in done.stdout
    assert repo.refs[f"heads/{BRANCH}"] == head
    assert not [c for c in _pull(issue).review_comments if c.get("in_reply_to_id")]
