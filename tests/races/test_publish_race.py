"""One run published by two processes at the same moment (one event delivered to two jobs, each
deciding the same intent): the one whose branch write GitHub refuses because the other's landed
first finds the branch at the run's own commit on the same base and takes it as its publish,
as it would have a moment later. Before, it failed the run as "the branch moved", and its
handoff overwrote the subject's one comment with `failed` while the work was published.

Then both open the branch's pull request: each looks it up by branch, and when both look before
either creates, both create. GitHub keeps one open pull request per head and base and refuses
the second with 422 "A pull request already exists"; that one is then looked up and taken as
the publish's. Before, the refusal failed the run (PushedThenFailed) and the loopback GitHub,
which took the second create, let the 8-way race (`test_concurrent_runs.py`) open two."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import github
import pytest

from holon.github import publish_pr, publish_ref
from holon.github.client import GitHubConfig, make_client
from holon.github.errors import PublishError
from holon.github.publish import PushedThenFailed, publish_change
from tests.github.publish_support import runner_patch, seed
from tests.github.test_publish import BASE, LOGIN, REPO, TOKEN, edit, request
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

BRANCH = "heads/holon/issue-1"


@pytest.fixture
def gh(github_server: LoopbackGitHub) -> Iterator[github.Github]:
    config = GitHubConfig(api_url=github_server.url, token=TOKEN, write_spacing=0.0, retries=0)
    client = make_client(config)
    yield client
    client.close()


def _racing(
    monkeypatch: pytest.MonkeyPatch, repo: Repo, message: Any = None, ref: str = BRANCH
) -> dict[str, str]:
    """Just before this process moves the branch (`ref`), another one moves it to its own
    commit of the same change (the same parents and tree; its message as given, else the
    same)."""
    real = publish_ref.move_branch
    other: dict[str, str] = {}

    def move(api: Any, branch: str, plan: Any, commit: str, **kw: Any) -> str:
        ours = repo.objects[commit]
        text = ours["message"] if message is None else message(ours["message"])
        # A different commit (another process made it): one more line in its title.
        twin = repo.commit("Also: " + text, ours["tree"], list(ours["parents"]))
        repo.refs[ref] = other["commit"] = twin
        return real(api, branch, plan, commit, **kw)

    monkeypatch.setattr("holon.github.publish.move_branch", move)
    return other


def test_the_same_run_published_first_by_another_process_is_this_publish(
    gh: github.Github,
    github_server: LoopbackGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    base = seed(repo, BASE)
    other = _racing(monkeypatch, repo)
    outcome = publish_change(gh, LOGIN, request(base), runner_patch(tmp_path, BASE, edit))
    assert outcome.output["commit"] == other["commit"] == repo.refs[BRANCH]
    assert outcome.output["pull_request"] == 2
    assert len([i for i in repo.issues.values() if i.pull]) == 1


def test_another_runs_commit_landing_meanwhile_is_still_a_moved_branch(
    gh: github.Github,
    github_server: LoopbackGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    base = seed(repo, BASE)
    other = _racing(monkeypatch, repo, lambda text: text.replace("Holon-Run:", "Other-Run:"))
    with pytest.raises(PublishError, match="moved while Holon published") as caught:
        publish_change(gh, LOGIN, request(base), runner_patch(tmp_path, BASE, edit))
    assert caught.value.reason == "moved"
    assert repo.refs[BRANCH] == other["commit"]
    assert "pulls/create" not in github_server.operations()


def test_a_pr_fix_another_process_published_first_is_this_publish(
    gh: github.Github, github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    # The same change request delivered to two jobs: both fix the pull request from its head;
    # the second to publish finds the head at the run's own commit on that head, not "moved".
    repo = github_server.state.repos[REPO]
    head = seed(repo, BASE)
    repo.refs["heads/feature/fix"] = head
    pull = repo.add_pull("Fix the crash", head="feature/fix")
    assert pull.pull is not None
    patch = runner_patch(tmp_path, BASE, edit)
    fix = request(head, kind="pull_request", number=1, skill="github-pr-fix", base_branch=None)
    first = publish_change(gh, LOGIN, fix, patch)
    assert pull.pull.head_sha == first.output["commit"] != head
    second = publish_change(gh, LOGIN, fix, patch)
    assert second.output["commit"] == first.output["commit"] == pull.pull.head_sha
    assert not second.performed
    assert github_server.count("git/create-commit") == 1


def test_a_pr_fix_whose_push_lost_to_another_process_takes_its_commit(
    gh: github.Github,
    github_server: LoopbackGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Both jobs read the head at the run's start; the other's fast-forward lands first, ours
    # is refused (not a fast-forward) and the head is the run's commit: so both jobs' replies
    # name that one commit, and the replies' look again keeps one (test_reply_race.py).
    repo = github_server.state.repos[REPO]
    head = seed(repo, BASE)
    repo.refs["heads/feature/fix"] = head
    pull = repo.add_pull("Fix the crash", head="feature/fix")
    assert pull.pull is not None
    other = _racing(monkeypatch, repo, ref="heads/feature/fix")
    fix = request(head, kind="pull_request", number=1, skill="github-pr-fix", base_branch=None)
    outcome = publish_change(gh, LOGIN, fix, runner_patch(tmp_path, BASE, edit))
    assert outcome.output["commit"] == other["commit"] == repo.refs["heads/feature/fix"]
    assert github_server.count("git/update-ref") == 1


def _opened_meanwhile(monkeypatch: pytest.MonkeyPatch, repo: Repo) -> dict[str, int]:
    """Just after this process first looks up the branch's pull request (and finds none),
    another process of the same run opens it (with no body yet, to tell the two apart)."""
    real = publish_pr.find_pull
    other: dict[str, int] = {}

    def find(api: Any, branch: str) -> dict[str, Any] | None:
        found = real(api, branch)
        if not other:
            other["number"] = repo.add_pull("Fix #1", head=branch, user=LOGIN).number
        return found

    monkeypatch.setattr("holon.github.publish_pr.find_pull", find)
    return other


def _holon_pulls(repo: Repo) -> list[int]:
    return [i.number for i in repo.issues.values() if i.pull and i.pull.head == BRANCH[6:]]


def test_a_pull_request_another_process_opened_meanwhile_is_this_publish(
    gh: github.Github,
    github_server: LoopbackGitHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    base = seed(repo, BASE)
    other = _opened_meanwhile(monkeypatch, repo)
    outcome = publish_change(gh, LOGIN, request(base), runner_patch(tmp_path, BASE, edit))
    # GitHub refused the second create; the one open pull request is this publish's.
    assert github_server.count("pulls/create") == 1
    assert _holon_pulls(repo) == [other["number"]]
    assert outcome.output["pull_request"] == other["number"]
    assert outcome.output["commit"] == repo.refs[BRANCH]
    assert outcome.output["pull_request_action"] == "updated"  # its body brought up to date
    assert outcome.note == "opened meanwhile, by another job of this run or someone else"
    assert "holon" in repo.issues[other["number"]].body  # this publish's body now


def test_a_create_refused_for_another_reason_still_fails_after_the_push(
    gh: github.Github,
    github_server: LoopbackGitHub,
    tmp_path: Path,
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    base = seed(repo, BASE)
    github_server.fail("pulls/create", 422)
    with pytest.raises(PushedThenFailed) as caught:
        publish_change(gh, LOGIN, request(base), runner_patch(tmp_path, BASE, edit))
    assert caught.value.pushed.output["commit"] == repo.refs[BRANCH]
    assert _holon_pulls(repo) == []
    assert github_server.count("pulls/list") == 2  # looked up before and after the refusal
