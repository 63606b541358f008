"""The GitHub handler of the executor over the loopback GitHub: intents become effects and
answers become results (what was made in `output`, refusals and failed calls as one-line errors)."""

from __future__ import annotations

from typing import Any

import pytest

from holon.executor.executor import build_executor
from holon.intent import Target, make_intent
from holon.skills.catalog import default_catalog
from tests.executor.conftest import AT, clock
from tests.github.effect_scope import HOLON, REPO, scope_on

ISSUE = Target(repo=REPO, kind="issue", id="1")


def _intent(type_: str, args: dict[str, Any], target: Target = ISSUE) -> Any:
    return make_intent(
        type_=type_,
        target=target,
        args=args,
        reason="test",
        decider="test",
        event_key="k",
        event_id="evt_1",
        at=AT,
        skills=default_catalog().names(),
    )


def _execute(server: Any, intent: Any, attempt: int = 1) -> Any:
    from holon.github.handler import EFFECTS, GitHubHandler

    with scope_on(server.url) as scope:
        handler = GitHubHandler(scope, clock)
        github = {name: handler for name in EFFECTS}
        executor = build_executor(dry_run=False, clock=clock, run_skill=None, github=github)
        return executor.execute(intent, attempt)


def test_a_comment_is_posted_once_and_edited_in_place_after(github_server: Any) -> None:
    issue = github_server.state.repos[REPO].add_issue("Bug")
    first = _execute(github_server, _intent("comment", {"body": "usage", "kind": "usage"}))
    again = _execute(github_server, _intent("comment", {"body": "usage, v2", "kind": "usage"}))
    assert (first.status, again.status) == ("succeeded", "succeeded")
    assert first.output is not None
    assert first.output.comment_id == again.output.comment_id  # the same comment, edited
    assert [(c.issue, c.user) for c in github_server.state.repos[REPO].comments.values()] == [
        (issue.number, HOLON)
    ]
    assert github_server.count("issues/create-comment") == 1
    assert github_server.count("issues/update-comment") == 1


def test_adding_a_label_that_is_there_writes_nothing(github_server: Any) -> None:
    github_server.state.repos[REPO].add_issue("Bug", labels=["bug"])
    result = _execute(github_server, _intent("label", {"label": "bug"}))
    assert result.status == "succeeded"
    assert result.effect == {"effect": "label", "performed": False, "note": result.effect["note"]}
    assert github_server.count("issues/add-labels") == 0


def test_closing_a_closed_issue_is_a_no_op(github_server: Any) -> None:
    github_server.state.repos[REPO].add_issue("Done", state="closed")
    result = _execute(github_server, _intent("close_issue", {}))
    assert (result.status, result.effect["performed"]) == ("succeeded", False)


def test_a_refusal_is_a_failed_attempt_with_its_reason(github_server: Any) -> None:
    github_server.state.repos[REPO].add_issue("Bug")
    result = _execute(github_server, _intent("label", {"label": "a\nb"}))
    assert result.status == "failed"
    assert result.error is not None
    assert "\n" not in result.error
    assert github_server.count() == 0


def test_a_missing_permission_is_one_line_naming_it(github_server: Any) -> None:
    github_server.state.repos[REPO].add_issue("Bug")
    github_server.fail("issues/create-comment", 403, {"message": "Resource not accessible"})
    result = _execute(github_server, _intent("comment", {"body": "hi", "kind": "note"}))
    assert result.status == "failed"
    assert "issues: write" in (result.error or "")


@pytest.mark.parametrize(
    ("type_", "args", "operation", "permission"),
    [
        ("comment", {"body": "hi", "kind": "note"}, "issues/create-comment", "issues: write"),
        ("label", {"label": "holon"}, "issues/add-labels", "issues: write"),
    ],
)
def test_a_permission_404_is_one_line_naming_the_permission(
    github_server: Any, type_: str, args: dict[str, Any], operation: str, permission: str
) -> None:
    # GitHub answers 404, not 403, to a token that may not write where it cannot be seen to.
    github_server.state.repos[REPO].add_issue("Bug")
    github_server.fail(operation, 404, {"message": "Not Found"})
    result = _execute(github_server, _intent(type_, args))
    assert result.status == "failed"
    error = result.error or ""
    assert "\n" not in error
    assert f"GitHub refused {operation} (404 Not Found)" in error
    assert f"`permissions: {permission}`" in error


@pytest.mark.parametrize("attempt", [2, 3])
def test_a_dispatch_is_never_sent_twice(github_server: Any, attempt: int) -> None:
    result = _execute(github_server, _intent("dispatch", {"reason": "later"}), attempt)
    assert result.status == "failed"
    assert "sent once only" in (result.error or "")
    assert github_server.count() == 0


def test_a_first_dispatch_goes_to_the_events_repository(github_server: Any) -> None:
    result = _execute(github_server, _intent("dispatch", {"reason": "later"}))
    assert result.status == "succeeded", result.error
    assert github_server.operations() == ["repos/create-dispatch-event"]
    assert github_server.last("repos/create-dispatch-event").json["event_type"] == "holon"
