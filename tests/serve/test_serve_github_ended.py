"""`holon serve` settling its progress comment and `Holon` check run when a run ends other than
by its own settlement: expired by a tick, cancelled by `/holon stop`, refused by recovery at
start (`PassReport.ended_runs`), against the loopback GitHub."""

from __future__ import annotations

import json
import shlex
import signal
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from holon.cli.serve_cmd import CRASH_ENV
from holon.controller.policy import load_policy
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.serve.edge import github_edge
from holon.serve.github_hooks import GitHubHooks
from holon.serve.serve import Serve, ServeOptions, tick_envelope
from tests.github.merge_support import holon_pull, pull_of
from tests.serve.github_serve import (
    HELLO,
    REPO,
    TOKEN,
    comment_event,
    review_event,
    serve,
    without_publishing,
)
from tests.support.github_fake.loopback import LoopbackGitHub

HOLON_LOGIN = "github-actions[bot]"
APP = "octoapp[bot]"  # the loopback GitHub's check runs are by its documented example's app
WORKING = "is working on this"  # the progress comment, before it is settled


class Crash(RuntimeError):
    """A bug inside Holon in the middle of a run: the pass fails, the run stays inflight."""


@pytest.fixture
def app_server() -> Iterator[LoopbackGitHub]:
    with LoopbackGitHub(token=TOKEN, login=APP) as server:
        yield server
    server.assert_clean()


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def _envelope(line: dict[str, Any], at: datetime) -> EventEnvelope:
    return normalize(line["event"], line["payload"], via="replay", received_at=at)


def _serve_with_a_run_left_inflight(
    server: LoopbackGitHub, tmp_path: Path, event: dict[str, Any], login: str
) -> tuple[Serve, Clock]:
    """An in-process serve whose run of `event` was cut off by a failure inside Holon: the
    progress comment (and check run) in progress, the run inflight in the state."""
    clock = Clock()
    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": server.url,
        "HOLON_GITHUB_LOGIN": login,
        "HOLON_GITHUB_WRITE_SPACING": "0",
    }
    policy_path = without_publishing(tmp_path)
    settings = load_policy(policy_path).settings
    edge = github_edge(env, REPO, clock=clock, on_wait=lambda wait: None, settings=settings)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    crashed: list[str] = []

    def crash(point: str) -> None:
        if point == "after_effect_before_journal" and not crashed:
            crashed.append(point)
            raise Crash(point)

    options = ServeOptions(
        state_dir=tmp_path / "s", workspace=workspace, agent=shlex.split(HELLO),
        policy=policy_path, repo=REPO, once=True,
    )  # fmt: skip
    serve = Serve(
        options, clock=clock, facts=edge.facts, github=edge.handlers(), crashpoint=crash,
        hooks=GitHubHooks(edge.scope, edge.facts, run_url=None),
    )  # fmt: skip
    serve.open()
    serve.handle(_envelope(event, clock()))
    assert crashed
    assert len(serve.failed) == 1
    assert [r.status for r in serve.state.live("intent")] == ["inflight"]
    return serve, clock


def test_a_stop_settles_the_progress_comment_of_the_run_it_cancels(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    solve = comment_event(1, "/holon solve", "OWNER")
    serve, clock = _serve_with_a_run_left_inflight(github_server, tmp_path, solve, HOLON_LOGIN)
    (comment,) = repo.comments.values()
    assert WORKING in comment.body
    try:
        serve.handle(_envelope(comment_event(1, "/holon stop", "OWNER", ident=2), clock()))
    finally:
        serve.close()
    assert [r.status for r in serve.state.live("intent") if r.data["type"] == "run_skill"] == [
        "cancelled"
    ]
    (comment,) = repo.comments.values()  # the same comment, now the handoff
    assert "**Outcome:** `userinterlude`" in comment.body, comment.body
    assert github_server.count("issues/create-comment") == 1


def test_a_tick_that_expires_a_run_settles_its_check_run_and_comment(
    app_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = app_server.state.repos[REPO]
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    fix = review_event(2, sha, "commented", "/holon fix")
    serve, clock = _serve_with_a_run_left_inflight(app_server, tmp_path, fix, APP)
    (check,) = [c for c in repo.check_runs.values() if c["name"] == "Holon"]
    assert check["status"] == "in_progress"
    clock.now += timedelta(hours=3)  # past the policy's stale_inflight (2h)
    try:
        serve.handle(tick_envelope(clock(), REPO))
    finally:
        serve.close()
    assert [r.status for r in serve.state.live("intent")] == ["expired"]
    (check,) = [c for c in repo.check_runs.values() if c["name"] == "Holon"]
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    (comment,) = [c for c in repo.comments.values() if c.issue == 2]
    assert "**Outcome:** `failed`" in comment.body, comment.body


def test_a_run_refused_by_recovery_at_start_settles_its_progress_comment(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    state = tmp_path / "s"
    solve = comment_event(1, "/holon solve", "OWNER")
    agent = ("--workspace", str(workspace), "--agent", HELLO)
    killed = serve(
        github_server, state, [solve], *agent, env_extra={CRASH_ENV: "after_effect_before_journal"}
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (comment,) = repo.comments.values()
    assert WORKING in comment.body
    # Restored without its events journal: the event that decided the run is not on record.
    (state / "events.ndjson").unlink()
    again = serve(github_server, state, [solve], *agent)
    assert again.returncode == 1, again.stderr
    decisions = [json.loads(x) for x in (state / "decisions.ndjson").read_text().splitlines()]
    assert [d["refused"][0]["guard"] for d in decisions if d["outcome"] == "refused"] == [
        "provenance"
    ]
    (comment,) = repo.comments.values()
    assert "**Outcome:** `failed`" in comment.body, comment.body
