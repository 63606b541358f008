"""The merge effect (holon/github/merge.py) over real HTTP against the loopback GitHub: every
check right before the merge, each refusal or wait with its reason and no merge call, the merge
pinned to the sha, a 409 or 405 as a wait, and the merge call never sent twice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from holon.controller.policy import Settings
from holon.github.errors import PermissionDenied, Rejected, ServerError
from holon.github.merge import HOLD_LABELS, WIP_MARKERS, merge_pull, wip_marker
from holon.github.outcome import EffectOutcome
from tests.github.merge_support import (
    REPO,
    check,
    facts_for,
    holon_pull,
    pull_of,
    require,
    review,
)
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Issue, Repo

HAPPY = [
    "pulls/get",
    "pulls/list-reviews",
    "repos/get-branch-rules",
    "checks/list-for-ref",
    "repos/get-combined-status-for-ref",
    "pulls/merge",
]


@pytest.fixture
def repo(github_server: LoopbackGitHub) -> Repo:
    return github_server.state.repos[REPO]


@pytest.fixture
def ready(repo: Repo) -> Issue:
    """A pull request that may be merged: approved by the owner, its required check green."""
    issue = holon_pull(repo)
    review(issue)
    require(repo, "ci")
    check(repo, pull_of(issue).head_sha, "ci")
    return issue


def _merge(
    server: LoopbackGitHub,
    issue: Issue,
    method: str = "squash",
    sleep: Callable[[float], None] = lambda seconds: None,
    **kw: str | None,
) -> EffectOutcome:
    # The fake's pull requests merge into main: the base the merge was decided for.
    options = {"sha": pull_of(issue).head_sha, "event_repo": REPO, "base_ref": "main", **kw}
    facts = facts_for(server.url)
    return merge_pull(facts, REPO, issue.number, method=method, sleep=sleep, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["merge", "squash", "rebase"])
def test_a_ready_pull_request_is_merged_at_its_sha(
    github_server: LoopbackGitHub, repo: Repo, ready: Issue, method: str
) -> None:
    sha = pull_of(ready).head_sha
    outcome = _merge(github_server, ready, method)
    assert outcome.performed
    assert outcome.wait is None
    assert outcome.output == {
        "pull": ready.number,
        "sha": sha,
        "merged": True,
        "merge_sha": repo.refs["heads/main"],
        "method": method,
    }
    assert github_server.operations() == HAPPY
    assert github_server.last("pulls/merge").json == {"sha": sha, "merge_method": method}
    assert pull_of(ready).merged


@dataclass(frozen=True)
class Case:
    code: str
    note: str
    arrange: Callable[[Repo, Issue], None]
    wait: bool = False
    calls: int = 1  # API calls made before it stopped


def _title(title: str) -> Callable[[Repo, Issue], None]:
    return lambda repo, issue: setattr(issue, "title", title)


def _labels(*names: str) -> Callable[[Repo, Issue], None]:
    return lambda repo, issue: setattr(issue, "labels", list(names))


def _pull(**fields: object) -> Callable[[Repo, Issue], None]:
    def arrange(repo: Repo, issue: Issue) -> None:
        for name, value in fields.items():
            setattr(pull_of(issue), name, value)

    return arrange


def _reviews(state: str, *, old: bool = False) -> Callable[[Repo, Issue], None]:
    def arrange(repo: Repo, issue: Issue) -> None:
        pull_of(issue).reviews.clear()
        review(issue, state=state, commit=repo.refs["heads/main"] if old else None)

    return arrange


def _check(conclusion: str | None, status: str = "completed") -> Callable[[Repo, Issue], None]:
    def arrange(repo: Repo, issue: Issue) -> None:
        repo.check_runs.clear()
        check(repo, pull_of(issue).head_sha, "ci", status=status, conclusion=conclusion)

    return arrange


REFUSALS = {
    "draft": Case("draft", "the pull request is a draft", _pull(draft=True)),
    "wip_title": Case("wip", "the title marks it work in progress (WIP)", _title("[WIP] Fix")),
    "draft_title": Case(
        "wip", "the title marks it work in progress (Draft:)", _title("draft: fix it")
    ),
    "hold_label": Case("hold", "the label 'Hold' holds it", _labels("bug", "Hold")),
    "do_not_merge_label": Case(
        "hold", "the label 'do-not-merge' holds it", _labels("do-not-merge")
    ),
    "closed": Case(
        "closed", "the pull request is closed", lambda r, i: setattr(i, "state", "closed")
    ),
    "conflicts": Case(
        "mergeable", "it conflicts with its base branch", _pull(mergeable=False), wait=True
    ),
    "mergeability_not_computed": Case(
        "mergeable",
        "GitHub has not computed mergeability yet",
        _pull(mergeable=None),
        wait=True,
        calls=2,  # read once more before waiting
    ),
    "no_approval": Case(
        "approval", "no approval from a reviewer with write access", _reviews("COMMENTED"), calls=2
    ),
    "changes_requested": Case(
        "approval", "octocat requested changes", _reviews("CHANGES_REQUESTED"), calls=2
    ),
    "approval_dismissed": Case(
        "approval", "no approval from a reviewer with write access", _reviews("DISMISSED"), calls=2
    ),
    "approval_stale": Case(
        "stale", "every approval predates the head", _reviews("APPROVED", old=True), calls=2
    ),
    "checks_red": Case("checks", "'ci' failed on", _check("failure"), calls=5),
    "checks_pending": Case(
        "checks", "'ci' not passed yet on", _check(None, "in_progress"), wait=True, calls=5
    ),
    "checks_missing": Case(
        "checks", "'ci' not passed yet on", lambda r, i: r.check_runs.clear(), wait=True, calls=5
    ),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_each_check_refuses_or_waits_without_merging(
    github_server: LoopbackGitHub, repo: Repo, ready: Issue, case: Case
) -> None:
    case.arrange(repo, ready)
    outcome = _merge(github_server, ready)
    assert not outcome.performed
    assert case.note in outcome.note
    key = "waiting" if case.wait else "refused"
    assert outcome.output[key] == case.code
    assert outcome.wait == (outcome.note if case.wait else None)
    assert github_server.count("pulls/merge") == 0
    assert github_server.count() == case.calls
    assert not pull_of(ready).merged


def test_checks_unknown_refuse(github_server: LoopbackGitHub, ready: Issue) -> None:
    github_server.fail("repos/get-branch-rules", 403)
    outcome = _merge(github_server, ready)
    assert (outcome.output["refused"], outcome.wait) == ("checks", None)
    assert outcome.note.startswith("cannot read the checks on")
    assert "metadata: read" in outcome.note
    assert github_server.count("pulls/merge") == 0


def test_the_head_moved_before_the_merge(github_server: LoopbackGitHub, ready: Issue) -> None:
    decided = pull_of(ready).head_sha
    pull_of(ready).head_sha = pull_of(ready).reviews[0]["commit_id"] = "0" * 40
    outcome = _merge(github_server, ready, sha=decided)
    assert outcome.output["waiting"] == "head_moved"
    assert outcome.wait == f"head moved to {'0' * 12}; not merging {decided[:12]}"
    assert github_server.operations() == ["pulls/get"]


def test_mergeability_computed_on_the_second_read(
    github_server: LoopbackGitHub, ready: Issue
) -> None:
    pull_of(ready).mergeable = None
    original = github_server.handle

    def compute(method: str, target: str, headers: dict[str, str], raw: bytes):  # type: ignore[no-untyped-def]
        answer = original(method, target, headers, raw)
        pull_of(ready).mergeable = True  # GitHub's background job finished after the first read
        return answer

    github_server.handle = compute  # type: ignore[method-assign]
    slept: list[float] = []
    assert _merge(github_server, ready, sleep=slept.append).performed
    assert slept == [2.0]  # a moment for GitHub's background job before the second read
    assert github_server.operations() == ["pulls/get", *HAPPY]


@pytest.mark.parametrize("decided_for", ["release", None])
def test_a_base_other_than_the_one_decided_for_is_refused(
    github_server: LoopbackGitHub, ready: Issue, decided_for: str | None
) -> None:
    # The base was changed after the merge was decided (to main here, from `decided_for`).
    outcome = _merge(github_server, ready, base_ref=decided_for)
    assert (outcome.performed, outcome.output["refused"], outcome.wait) == (False, "base", None)
    assert outcome.note == f"the base branch is now main; the merge was decided for {decided_for}"
    assert github_server.operations() == ["pulls/get"]  # one read, no merge
    assert not pull_of(ready).merged


@pytest.mark.parametrize("event_repo", ["octocat/Spoon-Knife", None, "octocat/Hello-World.git"])
def test_a_target_outside_the_events_repository_is_refused(
    github_server: LoopbackGitHub, ready: Issue, event_repo: str | None
) -> None:
    outcome = _merge(github_server, ready, event_repo=event_repo)
    assert (outcome.performed, outcome.output["refused"]) == (False, "repository")
    assert outcome.note == "the pull request is not in the event's repository"
    assert github_server.calls == []


def test_the_events_repository_in_another_case_is_the_same(
    github_server: LoopbackGitHub, ready: Issue
) -> None:
    assert _merge(github_server, ready, event_repo="OctoCat/hello-world").performed


def test_an_unknown_method_is_refused(github_server: LoopbackGitHub, ready: Issue) -> None:
    outcome = _merge(github_server, ready, "fast-forward")
    assert (outcome.output["refused"], outcome.note) == (
        "method",
        "unknown merge method 'fast-forward'",
    )
    assert github_server.calls == []


def test_already_merged_is_not_merged_again(github_server: LoopbackGitHub, ready: Issue) -> None:
    assert _merge(github_server, ready).performed
    github_server.calls.clear()
    again = _merge(github_server, ready)
    assert (again.performed, again.note) == (False, "already merged")
    assert again.output["merged"] is True
    assert again.output["already"] is True
    assert again.output["merge_sha"] == pull_of(ready).merge_commit_sha
    assert github_server.operations() == ["pulls/get"]


@pytest.mark.parametrize(
    ("status", "code", "said"),
    [(409, "head_moved", "the head moved while merging"), (405, "not_mergeable", "will not merge")],
)
def test_a_409_or_405_is_a_wait(
    github_server: LoopbackGitHub, ready: Issue, status: int, code: str, said: str
) -> None:
    github_server.fail("pulls/merge", status)
    outcome = _merge(github_server, ready)
    assert (outcome.performed, outcome.output["waiting"]) == (False, code)
    assert said in (outcome.wait or "")
    assert github_server.count("pulls/merge") == 1


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_5xx_is_read_back_never_sent_again(
    github_server: LoopbackGitHub, ready: Issue, status: int
) -> None:
    github_server.fail("pulls/merge", status, times=5)
    with pytest.raises(ServerError) as caught:
        _merge(github_server, ready)
    assert str(caught.value) == (
        f"GitHub may or may not have merged #{ready.number}: after a {status} answer to "
        "pulls/merge a re-read shows it not merged; the merge was not sent again"
    )
    assert caught.value.status == status
    assert github_server.count("pulls/merge") == 1
    assert github_server.operations()[-2:] == ["pulls/merge", "pulls/get"]


def test_a_refused_merge_names_the_permission(github_server: LoopbackGitHub, ready: Issue) -> None:
    github_server.fail("pulls/merge", 403)
    with pytest.raises(PermissionDenied, match="contents: write"):
        _merge(github_server, ready)
    github_server.fail("pulls/merge", 422)
    with pytest.raises(Rejected):
        _merge(github_server, ready)
    assert github_server.count("pulls/merge") == 2  # one per call: none sent again


@pytest.mark.parametrize(
    ("title", "marker"),
    [
        ("WIP: fix", "WIP"),
        ("[WIP] fix", "WIP"),
        ("fix (wip)", "WIP"),
        ("Draft: fix", "Draft:"),
        ("[Draft] fix", "[Draft]"),
        ("Wipe the cache", None),
        ("Redraft: docs", None),
        ("swipe", None),
        ("Fix the crash", None),
    ],
)
def test_wip_markers(title: str, marker: str | None) -> None:
    assert wip_marker(title) == marker


def test_wip_markers_are_configurable() -> None:
    assert wip_marker("DO NOT MERGE: x", ["do not merge"]) == "do not merge"
    assert wip_marker("WIP", ["", "  "]) is None


def test_the_policys_defaults_are_the_merges() -> None:
    settings = Settings()
    assert tuple(settings.hold_labels) == HOLD_LABELS
    assert tuple(settings.wip_markers) == WIP_MARKERS
