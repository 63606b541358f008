"""A progress comment created when work starts and settled with the handoff however the work
ends: finished, failed, timed out, cancelled; the same comment every time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from holon.github.effects import Scope
from holon.github.marker import format_marker, parse_marker
from holon.github.progress import settle, start_progress
from tests.github.effect_scope import ISSUE, REPO, RUN_URL, SKILL, handoff, scope_on
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

MARK = format_marker("issue", "1", "holon", SKILL)


@pytest.fixture
def state(github_server: LoopbackGitHub) -> Repo:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    return repo


@pytest.fixture
def scope(github_server: LoopbackGitHub, state: Repo) -> Iterator[Scope]:
    with scope_on(github_server.url) as made:
        yield made


def test_progress_links_the_run(scope: Scope, state: Repo) -> None:
    outcome = start_progress(scope, ISSUE, SKILL, RUN_URL)
    assert outcome.performed
    [comment] = state.comments.values()
    assert comment.body.startswith(MARK + "\n### Holon · `working`")
    assert f"[the workflow run]({RUN_URL})" in comment.body
    assert "`github-issue-solve`" in comment.body


def test_progress_without_a_run_link_or_with_a_bad_one(scope: Scope, state: Repo) -> None:
    start_progress(scope, ISSUE, SKILL, None)
    start_progress(scope, ISSUE, SKILL, "javascript:alert(1)")
    [comment] = state.comments.values()
    assert "](" not in comment.body
    assert "javascript" not in comment.body  # only an http(s) URL is linked
    assert "Follow it in the workflow run." in comment.body


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("completed_success", "finished"),
        ("failed_run", "failed"),
        ("timed_out_run", "failed"),
        ("cancelled_workflow", "userinterlude"),
        ("question", "askuserQuestion"),
        ("runnable", "continuing"),
    ],
)
def test_settle_replaces_the_progress_comment_in_place(
    scope: Scope, state: Repo, github_server: LoopbackGitHub, name: str, label: str
) -> None:
    started = start_progress(scope, ISSUE, SKILL, RUN_URL)
    github_server.calls.clear()
    settled = settle(scope, ISSUE, handoff(name, title="Crash on start"))
    assert settled.performed
    assert settled.output["comment_id"] == started.output["comment_id"]
    # The start posted it in this process: its id is known, the settle is the edit alone.
    assert github_server.operations() == ["issues/update-comment"]
    [comment] = state.comments.values()
    assert parse_marker(comment.body) == parse_marker(MARK)
    assert comment.body.count("<!--") == 1
    assert f"### Holon · `{label}`" in comment.body
    assert "working" not in comment.body.splitlines()[1]


def test_settling_twice_writes_once(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    start_progress(scope, ISSUE, SKILL, RUN_URL)
    settle(scope, ISSUE, handoff("failed_run"))
    github_server.calls.clear()
    again = settle(scope, ISSUE, handoff("failed_run"))
    assert not again.performed
    assert github_server.operations() == ["issues/list-comments"]
    assert len(state.comments) == 1


def test_settle_without_progress_posts_the_handoff(scope: Scope, state: Repo) -> None:
    outcome = settle(scope, ISSUE, handoff("completed_success"))
    assert outcome.performed
    [comment] = state.comments.values()
    assert comment.body.startswith(MARK + "\n### Holon · `finished`")


def test_a_new_run_after_a_handoff_takes_the_same_comment_back(scope: Scope, state: Repo) -> None:
    start_progress(scope, ISSUE, SKILL, RUN_URL)
    settle(scope, ISSUE, handoff("failed_run"))
    start_progress(scope, ISSUE, SKILL, RUN_URL + "1")
    [comment] = state.comments.values()
    assert "working" in comment.body
