"""Labels, closing an issue, review requests and dispatches: each reads before it writes, writes
only what is missing, refuses what Holon does not do, and costs the calls docs/github.md says."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from holon.github.dispatch import RepositoryDispatch, WorkflowDispatch, dispatch
from holon.github.effects import CrossRepository, EffectRefused, Scope, Subject, subject_from
from holon.github.errors import GitHubError, NotFound, PermissionDenied, Rejected, ServerError
from holon.github.issues import close_issue, request_review
from holon.github.labels import add_label, remove_label
from tests.github.effect_scope import ISSUE, PULL, REPO, scope_on
from tests.support.github_fake import GitHubFake, LoopbackGitHub
from tests.support.github_fake.state import Repo


@pytest.fixture
def state(github_server: LoopbackGitHub) -> Repo:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start", labels=["bug"])  # 1
    repo.refs["heads/holon/issue-1"] = repo.put_file("fix.txt", b"fixed\n", "main")
    repo.add_pull("Fix the crash", head="holon/issue-1", user="alice")  # 2
    return repo


@pytest.fixture
def scope(github_server: LoopbackGitHub, state: Repo) -> Iterator[Scope]:
    with scope_on(github_server.url) as made:
        yield made


# Labels


def test_add_a_missing_label_reads_then_adds(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    outcome = add_label(scope, ISSUE, "holon")
    assert outcome.performed
    assert outcome.output == {"labels": ["bug", "holon"]}
    assert github_server.operations() == ["issues/get", "issues/add-labels"]
    assert state.issues[1].labels == ["bug", "holon"]


@pytest.mark.parametrize("name", ["bug", "BUG"])
def test_add_a_present_label_writes_nothing(
    scope: Scope, github_server: LoopbackGitHub, name: str
) -> None:
    outcome = add_label(scope, ISSUE, name)
    assert not outcome.performed
    assert outcome.note == "the label is there"
    assert github_server.operations() == ["issues/get"]


def test_remove_a_present_label_by_the_name_it_has(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    outcome = remove_label(scope, ISSUE, "Bug")
    assert outcome.performed
    assert github_server.operations() == ["issues/get", "issues/remove-label"]
    assert github_server.calls[-1].path == f"/repos/{REPO}/issues/1/labels/bug"
    assert state.issues[1].labels == []


@pytest.mark.parametrize(
    ("name", "segment"), [("../..", "..%2F.."), ("a/b", "a%2Fb"), ("v1.2", "v1.2"), ("...", "...")]
)
def test_a_label_name_is_one_segment_of_the_url(
    github_server: LoopbackGitHub, name: str, segment: str
) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start", labels=[name, "bug"])
    with scope_on(github_server.url) as scope:
        assert remove_label(scope, ISSUE, name).performed
    assert github_server.operations() == ["issues/get", "issues/remove-label"]
    assert github_server.calls[-1].path == f"/repos/{REPO}/issues/1/labels/{segment}"
    assert github_server.state.repos[REPO].issues[1].labels == ["bug"]


@pytest.mark.parametrize("name", [".", ".."])
def test_a_label_named_as_a_dot_segment_is_refused(
    github_server: LoopbackGitHub, name: str
) -> None:
    # `.` and `..` are dot segments: resolving the URL removes them and what is before, so the
    # DELETE would go to another route (`..` to `/issues/1/`). requests decodes %2E back to a
    # dot before sending, so no encoding keeps them: refused before any call.
    github_server.state.repos[REPO].add_issue("Crash on start", labels=[name, "bug"])
    with scope_on(github_server.url) as scope:
        for effect in (add_label, remove_label):
            with pytest.raises(EffectRefused, match="dot segment"):
                effect(scope, ISSUE, name)
    assert github_server.calls == []


def test_the_handle_never_puts_a_dot_segment_in_a_url(github_server: LoopbackGitHub) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start", labels=[".."])
    with scope_on(github_server.url) as scope, pytest.raises(GitHubError, match="dot segment"):
        scope.repo.remove_label(1, "..")
    assert github_server.calls == []


def test_remove_an_absent_label_writes_nothing(scope: Scope, github_server: LoopbackGitHub) -> None:
    outcome = remove_label(scope, ISSUE, "holon")
    assert not outcome.performed
    assert outcome.note == "the label is not there"
    assert github_server.operations() == ["issues/get"]


def test_labels_on_a_pull_request_go_through_its_issue(scope: Scope, state: Repo) -> None:
    add_label(scope, PULL, "holon")
    assert state.issues[2].labels == ["holon"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "cannot be empty"),
        ("   ", "cannot be empty"),
        ("x" * 51, "at most 50 characters"),
        ("bug\nfix", "control or invisible"),
        ("bug\u200b", "control or invisible"),
    ],
)
def test_a_label_github_would_not_take_is_refused_in_one_line(
    scope: Scope, github_server: LoopbackGitHub, name: str, why: str
) -> None:
    for effect in (add_label, remove_label):
        with pytest.raises(EffectRefused, match=why) as caught:
            effect(scope, ISSUE, name)
        assert "\n" not in str(caught.value)
    assert github_server.calls == []


def test_a_label_of_fifty_characters_is_taken(scope: Scope, state: Repo) -> None:
    add_label(scope, ISSUE, "x" * 50)
    assert "x" * 50 in state.issues[1].labels


def test_labels_403_names_the_permission(scope: Scope, github_server: LoopbackGitHub) -> None:
    github_server.fail("issues/add-labels", 403)
    with pytest.raises(PermissionDenied, match=r"permissions: issues: write"):
        add_label(scope, ISSUE, "holon")


def test_labels_on_a_missing_issue_404(scope: Scope, github_server: LoopbackGitHub) -> None:
    with pytest.raises(NotFound, match="issues/get"):
        add_label(scope, Subject(REPO, "issue", 99), "holon")
    assert github_server.operations() == ["issues/get"]


# Closing an issue


def test_close_an_open_issue(scope: Scope, state: Repo, github_server: LoopbackGitHub) -> None:
    outcome = close_issue(scope, ISSUE, "not_planned")
    assert outcome.performed
    assert github_server.operations() == ["issues/get", "issues/update"]
    assert github_server.calls[-1].json == {"state": "closed", "state_reason": "not_planned"}
    assert state.issues[1].state == "closed"


def test_close_a_closed_issue_writes_nothing(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    state.issues[1].state = "closed"
    outcome = close_issue(scope, ISSUE)
    assert not outcome.performed
    assert outcome.note == "the issue is closed"
    assert github_server.operations() == ["issues/get"]


def test_close_refuses_a_pull_request(scope: Scope, github_server: LoopbackGitHub) -> None:
    with pytest.raises(EffectRefused, match="pull_request:2 is not an issue"):
        close_issue(scope, PULL)
    with pytest.raises(EffectRefused, match="issue 2 is a pull request"):
        close_issue(scope, Subject(REPO, "issue", 2))
    assert github_server.operations() == ["issues/get"]


# Review requests


def test_request_only_reviewers_not_requested(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    state.issues[2].pull.requested_reviewers.append("bob")  # type: ignore[union-attr]
    outcome = request_review(scope, PULL, ["bob", "carol", "alice", "Carol"])
    assert outcome.performed
    assert outcome.output == {"requested": ["carol"], "skipped": ["bob", "alice", "Carol"]}
    assert github_server.operations() == ["pulls/get", "pulls/request-reviewers"]
    assert github_server.calls[-1].json == {"reviewers": ["carol"]}
    assert state.issues[2].pull.requested_reviewers == ["bob", "carol"]  # type: ignore[union-attr]


def test_request_review_again_writes_nothing(scope: Scope, github_server: LoopbackGitHub) -> None:
    request_review(scope, PULL, ["carol"])
    github_server.calls.clear()
    outcome = request_review(scope, PULL, ["carol"])
    assert not outcome.performed
    assert github_server.operations() == ["pulls/get"]


@pytest.mark.parametrize(
    ("reviewers", "why"),
    [
        ([], "no reviewer is named"),
        (["bob; rm -rf /"], "is not a user's login"),
        (["bob\n"], "is not a user's login"),
        (["holon[bot]"], "is not a user's login"),
    ],
)
def test_request_review_refuses_what_is_not_a_login(
    scope: Scope, github_server: LoopbackGitHub, reviewers: list[str], why: str
) -> None:
    with pytest.raises(EffectRefused, match=why):
        request_review(scope, PULL, reviewers)
    assert github_server.calls == []


def test_request_review_on_an_issue_is_refused(scope: Scope) -> None:
    with pytest.raises(EffectRefused, match="issue:1 is not a pull request"):
        request_review(scope, ISSUE, ["bob"])


def test_request_review_403_names_the_permission(
    scope: Scope, github_server: LoopbackGitHub
) -> None:
    github_server.fail("pulls/request-reviewers", 403)
    with pytest.raises(PermissionDenied, match=r"permissions: pull-requests: write"):
        request_review(scope, PULL, ["carol"])


# Dispatch


def test_workflow_dispatch(scope: Scope, state: Repo, github_server: LoopbackGitHub) -> None:
    outcome = dispatch(scope, REPO, WorkflowDispatch("holon.yml", "main", {"subject": "issue:1"}))
    assert outcome.performed
    assert outcome.output == {"event": "workflow_dispatch", "workflow": "holon.yml", "ref": "main"}
    assert github_server.operations() == ["actions/create-workflow-dispatch"]
    assert state.dispatches[-1]["inputs"] == {"subject": "issue:1"}


def test_repository_dispatch(scope: Scope, state: Repo, github_server: LoopbackGitHub) -> None:
    outcome = dispatch(scope, REPO, RepositoryDispatch("holon-continue", {"subject": "issue:1"}))
    assert outcome.output == {"event": "repository_dispatch", "event_type": "holon-continue"}
    assert github_server.operations() == ["repos/create-dispatch-event"]
    assert state.dispatches[-1]["client_payload"] == {"subject": "issue:1"}


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        (WorkflowDispatch("../x.yml", "main"), "a file name"),
        (WorkflowDispatch("holon.sh", "main"), "a file name"),
        (WorkflowDispatch("holon.yml", "main..x"), "the ref"),
        (WorkflowDispatch("holon.yml", "$(id)"), "the ref"),
        (WorkflowDispatch("holon.yml", "main", {"a b": "1"}), "input name"),
        (WorkflowDispatch("holon.yml", "main", {"a": 1}), "not a string"),  # type: ignore[dict-item]
        (WorkflowDispatch("holon.yml", "main", {f"i{n}": "" for n in range(26)}), "at most 25"),
        (RepositoryDispatch(""), "event type"),
        (RepositoryDispatch("x" * 101), "event type"),
        (RepositoryDispatch("a\nb"), "event type"),
        (RepositoryDispatch("e", {f"k{n}": n for n in range(11)}), "at most 10"),
        (RepositoryDispatch("e", {"k": object()}), "not JSON"),
        (RepositoryDispatch("e", {"k": float("nan")}), "not JSON"),
    ],
)
def test_dispatch_refuses_what_github_would_not_take(
    scope: Scope, github_server: LoopbackGitHub, request_: Any, why: str
) -> None:
    with pytest.raises(EffectRefused, match=why):
        dispatch(scope, REPO, request_)
    assert github_server.calls == []


def test_dispatch_to_another_repository_is_refused(
    scope: Scope, github_server: LoopbackGitHub
) -> None:
    with pytest.raises(CrossRepository):
        dispatch(scope, "octocat/Other", RepositoryDispatch("e"))
    assert github_server.calls == []


def test_dispatch_403_names_the_permission(scope: Scope, github_server: LoopbackGitHub) -> None:
    github_server.fail("actions/create-workflow-dispatch", 403)
    with pytest.raises(PermissionDenied, match=r"permissions: actions: write"):
        dispatch(scope, REPO, WorkflowDispatch("holon.yml", "main"))
    github_server.fail("repos/create-dispatch-event", 403)
    with pytest.raises(PermissionDenied, match=r"permissions: contents: write"):
        dispatch(scope, REPO, RepositoryDispatch("e"))


def test_dispatch_to_a_missing_ref_is_rejected(scope: Scope, github_server: LoopbackGitHub) -> None:
    github_server.fail("actions/create-workflow-dispatch", 422)
    with pytest.raises(Rejected):
        dispatch(scope, REPO, WorkflowDispatch("holon.yml", "nope"))


def test_a_dispatch_answered_502_is_sent_once(github_fake: GitHubFake) -> None:
    github_fake.on("repos/create-dispatch-event", status=502)
    with (
        scope_on(github_fake.base_url) as scope,
        pytest.raises(ServerError, match="may or may not have done it"),
    ):
        dispatch(scope, REPO, RepositoryDispatch("e"))
    assert github_fake.operations() == ["repos/create-dispatch-event"]


# Every effect refuses another repository before any call.


@pytest.mark.parametrize(
    "effect",
    [
        lambda s, t: add_label(s, t, "x"),
        lambda s, t: remove_label(s, t, "x"),
        lambda s, t: close_issue(s, t),
        lambda s, t: request_review(s, Subject(t.repo, "pull_request", 2), ["bob"]),
    ],
)
def test_every_effect_refuses_another_repository(
    scope: Scope, github_server: LoopbackGitHub, effect: Any
) -> None:
    with pytest.raises(CrossRepository) as caught:
        effect(scope, Subject("someone/else", "issue", 1))
    assert "someone/else" in caught.value.reason
    assert github_server.calls == []


# From an intent's target to a subject


def test_subject_from_an_intents_target() -> None:
    assert subject_from("label", REPO, "issue", "7") == Subject(REPO, "issue", 7)
    assert subject_from("label", REPO, "pull_request", "2") == PULL


@pytest.mark.parametrize(
    ("repo", "kind", "id", "why"),
    [
        (REPO, "repository", REPO, "is a repository, not an issue"),
        (REPO, "issue", "0", "is not an issue or pull request number"),
        (REPO, "issue", "-1", "is not an issue or pull request number"),
        (REPO, "issue", "١٢", "is not an issue or pull request number"),  # Arabic-Indic digits
        (REPO, "issue", "9" * 11, "is not an issue or pull request number"),
        (REPO, "issue", "1\n", "is not an issue or pull request number"),
        (None, "issue", "1", "names no repository"),
    ],
)
def test_subject_from_refuses_what_is_not_a_subject(
    repo: str | None, kind: str, id: str, why: str
) -> None:
    with pytest.raises(EffectRefused, match=why) as caught:
        subject_from("label", repo, kind, id)
    assert "\n" not in str(caught.value)
