"""`holon serve` announcing a skill run on GitHub: one progress comment, settled in place with the
handoff however the run ends, and on a pull request the `Holon` check run."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git
from tests.github.merge_support import holon_pull, pull_of
from tests.serve.github_serve import HELLO, REPO, TOKEN, comment_event, review_event, serve
from tests.support.github_fake.loopback import LoopbackGitHub

APP = "octoapp[bot]"  # the loopback GitHub's check runs are by its documented example's app
FAILING = f"{sys.executable} -c 'import sys; sys.exit(3)'"
# A `github-pr-fix` stand-in writing the skill's artifacts (its schema is checked by the runner).
FIXER = """
import json, os, pathlib
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"]) / "fix.txt").write_text("fixed\\n")
(out / "summary.md").write_text("Fixed.")
(out / "pr-fix.json").write_text(json.dumps({"review_replies": [], "checks": [],
    "verification": [{"command": "true", "exit_code": 0}]}))
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


@pytest.fixture
def app_server() -> Iterator[LoopbackGitHub]:
    """The loopback GitHub writing as an app, so check runs are Holon's own."""
    with LoopbackGitHub(token=TOKEN, login=APP) as server:
        yield server
    server.assert_clean()


def _solve(server: Any, tmp_path: Path, agent: str, *, login: str) -> Any:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    event = comment_event(1, "/holon solve", "OWNER")
    return serve(
        server, tmp_path / "s", [event], "--workspace", str(workspace), "--agent", agent,
        login=login,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "code", "outcome"), [(HELLO, 0, "finished"), (FAILING, 1, "failed")]
)
def test_one_progress_comment_becomes_the_handoff(
    github_server: Any, tmp_path: Path, agent: str, code: int, outcome: str
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    run = _solve(github_server, tmp_path, agent, login="github-actions[bot]")
    assert run.returncode == code, run.stderr
    (comment,) = repo.comments.values()  # exactly one, by Holon
    assert comment.user == "github-actions[bot]"
    assert (
        "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->" in comment.body
    )
    assert f"**Outcome:** `{outcome}`" in comment.body, comment.body
    # Posted once (list, post, list again: another job may have posted at once), edited once
    # with the handoff: serve posted it, so it knows its id and edits it without a further
    # look-up. The other lists are each attempt's context (the issue's comments, for the agent).
    attempts = len(list((tmp_path / "s.runs").iterdir()))
    assert attempts == (1 if outcome == "finished" else 2)
    assert github_server.count("issues/create-comment") == 1
    assert github_server.count("issues/update-comment") == 1
    assert github_server.count("issues/list-comments") == 2 + attempts


def test_a_pull_request_gets_the_holon_check_run_with_the_closures_conclusion(
    app_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = app_server.state.repos[REPO]
    issue = holon_pull(repo)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # The run works on the pull request's head: the workspace holds it (its commit is the
    # head GitHub knows, as a checkout of it would be).
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "README.md").write_text("hello\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "head")
    sha = git(workspace, "rev-parse", "HEAD").strip()
    repo.objects[sha] = repo.objects[pull_of(issue).head_sha]
    repo.move_branch(pull_of(issue).head, sha)
    assert pull_of(issue).head_sha == sha
    fixer = tmp_path / "fixer.py"
    fixer.write_text(FIXER)
    event = review_event(2, sha, "commented", "/holon fix")
    agent = f"{sys.executable} {fixer}"
    run = serve(
        app_server, tmp_path / "s", [event], "--workspace", str(workspace), "--agent", agent,
        login=APP,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (check,) = [c for c in repo.check_runs.values() if c["name"] == "Holon"]
    assert (check["head_sha"], check["status"], check["conclusion"]) == (
        sha,
        "completed",
        "success",
    )
    assert app_server.count("checks/create") == 1
    assert app_server.count("checks/update") == 1
    (comment,) = [c for c in repo.comments.values() if c.issue == 2]
    assert "**Outcome:** `finished`" in comment.body


def test_a_failed_progress_write_is_reported_and_the_run_goes_on(
    github_server: Any, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    github_server.fail("issues/create-comment", 403)  # the progress note; the handoff is posted
    run = _solve(github_server, tmp_path, HELLO, login="github-actions[bot]")
    assert run.returncode == 0, run.stderr
    assert "progress not written (start)" in run.stderr
    assert "issues: write" in run.stderr  # the permission named, in one line
    events = (tmp_path / "s" / "events.ndjson").read_text()
    assert "progress not written (start)" in events
    (comment,) = repo.comments.values()
    assert "**Outcome:** `finished`" in comment.body


def test_a_failed_settle_is_written_by_the_next_pass(github_server: Any, tmp_path: Path) -> None:
    # docs/github.md, "Wiring": a failed settle is kept in the state, and the next pass of any
    # kind writes the handoff into the same comment (its marker), once.
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = tmp_path / "s"

    def once(*events: dict[str, Any]) -> Any:
        run = serve(
            github_server, state, list(events), "--workspace", str(workspace), "--agent", HELLO
        )
        assert run.returncode == 0, run.stderr
        return run

    def progress() -> str:
        marker = "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->"
        (body,) = [c.body for c in repo.comments.values() if marker in c.body]
        return body

    github_server.fail("issues/update-comment", 403)  # the settle's edit
    first = once(comment_event(1, "/holon solve", "OWNER", ident=1))
    assert "progress not written (settle)" in first.stderr
    assert "**Outcome:**" not in progress()  # still says Holon is working
    # Another pass on the subject, running no skill: the comment is settled now.
    once(comment_event(1, "/holon help", "OWNER", ident=2))
    assert "**Outcome:** `finished`" in progress()
    # The state no longer keeps it: a later run of the skill settles its own comment as ever.
    kept = json.loads((state / "state.json").read_text())["records"].get("meta:unsettled:issue:1")
    assert kept is None or kept.get("deleted") is True
    once(comment_event(1, "/holon solve", "OWNER", ident=3))
    assert "**Outcome:** `finished`" in progress()
    assert github_server.count("issues/create-comment") == 2  # the progress note, the usage reply
