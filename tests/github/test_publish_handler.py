"""The executor's `github-publish` handler over real HTTP against the loopback GitHub: a real
local run's output, named by its run id in the runs directory, becomes one commit on
`holon/issue-<n>` and a draft pull request; a publish that cannot be is a failed attempt whose
error names the reason (docs/github.md, "Wiring")."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import github

from holon.executor.executor import build_executor
from holon.github.publish_handler import PublishHandler
from holon.intent import ActionIntent, Target, make_intent
from holon.runner import RunRequest, run
from tests.conftest import spec_for
from tests.github.publish_support import seed
from tests.github.test_publish import LOGIN, REPO, gh  # noqa: F401  (a fixture)
from tests.support.github_fake import LoopbackGitHub

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
RUN = "act_0123456789abcdef01234567-1"
AGENT = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(ws / "tracked.txt").write_text("line 1\\nfixed by the agent\\n")
(out / "summary.md").write_text("Fixed it.")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def _run(tmp_path: Path, source: Path) -> Path:
    """A real run through the runner (local runtime), its output where serve puts it."""
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    runs = tmp_path / "runs"
    run(
        RunRequest(
            spec=spec_for("publish"),
            workspace=source,
            output=runs / RUN,
            runtime="local",
            agent=[sys.executable, str(script)],
            work_dir=tmp_path,
            run_id=RUN,
        )
    )
    return runs


def _intent(**inputs: str) -> ActionIntent:
    values = {"run": RUN, "skill": "github-issue-solve", "actor": "octocat", **inputs}
    return make_intent(
        type_="run_skill",
        target=Target(repo=REPO, kind="issue", id="1"),
        args={"skill": "github-publish", "inputs": values},
        reason="rule publish-settled-run matched holon.run.settled",
        decider="policy",
        event_key="holon:run.settled:act_x:1",
        event_id="evt_x",
        at=NOW,
        skills={"github-publish"},
    )


def _seeded(github_server: LoopbackGitHub, source: Path) -> Any:
    """GitHub holding the commit the run started from (in Actions the checkout came from it):
    the fake's copy of it, also under the id the local repository gave it."""
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start", user="octocat")
    base = seed(repo, {p.name: p.read_bytes() for p in source.iterdir() if p.is_file()})
    head = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    repo.objects[head] = repo.objects[base]
    repo.refs["heads/main"] = head
    return repo


def test_a_settled_issue_run_becomes_a_commit_and_a_draft_pull_request(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    source = make_repo(dirty=False)
    runs = _run(tmp_path, source)
    repo = _seeded(github_server, source)
    handler = PublishHandler(gh, REPO, LOGIN, runs, lambda: NOW)
    # The executor routes the host skill to it; the runner never sees it.
    executor = build_executor(
        dry_run=False, clock=lambda: NOW, run_skill=None, hosted={"github-publish": handler}
    )
    result = executor.execute(_intent(), 1)
    assert result.status == "succeeded", result.error
    assert (result.run_status, result.run_outcome) == ("completed", "success")
    assert result.output is not None
    assert result.output.number is not None
    pull = repo.issues[result.output.number].pull
    assert pull is not None
    assert (pull.head, pull.base, pull.draft) == ("holon/issue-1", "main", True)
    assert result.output.url is not None
    sha = result.output.sha
    assert sha is not None
    assert repo.refs["heads/holon/issue-1"] == sha
    files = {p: repo.objects[e["sha"]]["data"] for p, e in repo.files(sha).items()}
    assert files["tracked.txt"] == b"line 1\nfixed by the agent\n"
    # Settled again (a retry, a replay): the branch already has this run's commit.
    again = executor.execute(_intent(), 2)
    assert again.status == "succeeded"
    assert again.output is not None
    assert again.output.sha == sha
    assert again.effect is not None
    assert again.effect["performed"] is False


def test_a_publish_that_cannot_be_is_a_failed_attempt_naming_why(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    source = make_repo(dirty=False)
    runs = _run(tmp_path, source)
    repo = _seeded(github_server, source)
    handler = PublishHandler(gh, REPO, LOGIN, runs, lambda: NOW)
    # Someone else's commit on the branch Holon would push: it is not overwritten.
    other = repo.commit("someone's", repo.tree({}), [repo.refs["heads/main"]])
    repo.refs["heads/holon/issue-1"] = other
    result = handler(_intent(), 1)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.startswith("publish moved: ")
    assert "\n" not in result.error
    assert repo.refs["heads/holon/issue-1"] == other
    assert handler(_intent(run="../etc"), 1).error == (
        "publish bad-input: inputs.run must name a run (its id)"
    )
    missing = handler(_intent(run="act_nothing-1"), 1).error
    assert missing is not None
    assert missing.startswith("publish bad-input: ")
    review = handler(_intent(skill="github-review"), 1).error
    assert review == "publish bad-input: review.json is missing: nothing to post"


def test_without_a_token_publishing_is_journaled_as_a_dry_run_and_never_reaches_the_runner() -> (
    None
):
    reached: list[str] = []

    def runner(intent: ActionIntent, attempt: int) -> Any:
        reached.append(str(intent.args["skill"]))
        raise AssertionError("a host skill reached the runner")

    executor = build_executor(
        dry_run=False,
        clock=lambda: NOW,
        run_skill=runner,  # type: ignore[arg-type]
        host_skills={"github-publish"},
    )
    result = executor.execute(_intent(), 1)
    assert (result.status, result.dry_run) == ("succeeded", True)
    assert result.effect is not None
    assert result.effect["skill"] == "github-publish"
    assert result.effect["inputs"]["run"] == RUN
    assert reached == []


def test_without_holons_login_replies_are_refused_before_the_fix_is_pushed(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    source = make_repo(dirty=False)
    runs = _run(tmp_path, source)
    _seeded(github_server, source)
    (runs / RUN / "pr-fix.json").write_text(
        '{"review_replies": [{"comment_id": 7, "status": "fixed", "message": "Done."}],'
        ' "checks": [], "verification": [{"command": "make test", "exit_code": 0}]}'
    )
    handler = PublishHandler(gh, REPO, None, runs, lambda: NOW)
    result = handler(_intent(skill="github-pr-fix"), 1)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.startswith("publish no-login: ")
    assert "HOLON_GITHUB_LOGIN" in result.error
    assert github_server.operations() == []


def test_a_review_of_a_head_that_moved_is_a_failed_attempt_never_a_success(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    source = make_repo(dirty=False)
    runs = _run(tmp_path, source)
    repo = _seeded(github_server, source)
    reviewed = repo.refs["heads/main"]
    repo.refs["heads/feature"] = moved = repo.put_file("late.txt", b"pushed later\n", "main")
    repo.add_pull("Late change", head="feature", user="octocat")  # 2
    (runs / RUN / "review.json").write_text("[]")
    (runs / RUN / "review.md").write_text("Looks fine.")
    handler = PublishHandler(gh, REPO, LOGIN, runs, lambda: NOW)
    intent = _intent(skill="github-review").model_copy(
        update={"target": Target(repo=REPO, kind="pull_request", id="2")}
    )
    result = handler(intent, 1)
    assert result.status == "failed"
    assert result.run_outcome != "success"
    assert result.error is not None
    assert result.error.startswith(
        f"publish moved: the head moved from {reviewed[:12]} to {moved[:12]}"
    )
    assert "pulls/create-review" not in github_server.operations()
