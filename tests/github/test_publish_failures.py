"""Publishing when GitHub fails: a 5xx after GitHub did the write is looked up, never doubled;
one before it is sent once more after the lookup; a refusal leaves the branch untouched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import github
import pytest

from holon.github.client import GitHubConfig, make_client
from holon.github.errors import NotFound, PermissionDenied, PublishError, ServerError
from holon.github.publish import publish_change
from tests.github.publish_support import runner_patch, seed
from tests.github.test_publish import BASE, LOGIN, REPO, TOKEN, WRITES, edit, request
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

BRANCH = "heads/holon/issue-1"


@pytest.fixture
def gh(github_server: LoopbackGitHub) -> Iterator[github.Github]:
    client = make_client(
        GitHubConfig(api_url=github_server.url, token=TOKEN, write_spacing=0.0, retries=0)  # type: ignore[arg-type]
    )
    yield client
    client.close()


@pytest.fixture
def setup(tmp_path: Path, github_server: LoopbackGitHub) -> tuple[Repo, str, bytes]:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    return repo, seed(repo, BASE), runner_patch(tmp_path, BASE, edit)


def test_a_5xx_after_github_created_the_branch_is_looked_up_not_repeated(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    github_server.fail("git/create-ref", 502, done=True)
    outcome = publish_change(gh, LOGIN, request(base), patch)
    assert repo.refs[BRANCH] == outcome.output["commit"]
    assert github_server.count("git/create-ref") == 1
    assert github_server.count("git/get-ref") == 2  # the plan, then the lookup


def test_a_5xx_before_github_created_the_branch_is_sent_once_more_after_the_lookup(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    github_server.fail("git/create-ref", 503)
    outcome = publish_change(gh, LOGIN, request(base), patch)
    assert repo.refs[BRANCH] == outcome.output["commit"]
    ops = github_server.operations()
    i = ops.index("git/create-ref")
    assert ops[i : i + 3] == ["git/create-ref", "git/get-ref", "git/create-ref"]


def test_two_5xx_on_the_branch_stop_before_the_pull_request(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    github_server.fail("git/create-ref", 502, times=2)
    with pytest.raises(ServerError, match="may or may not have done it"):
        publish_change(gh, LOGIN, request(base), patch)
    assert BRANCH not in repo.refs
    assert "pulls/create" not in github_server.operations()


def test_a_5xx_after_github_opened_the_pull_request_does_not_open_a_second(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    github_server.fail("pulls/create", 502, done=True)
    outcome = publish_change(gh, LOGIN, request(base), patch)
    assert outcome.output["pull_request"] == 2
    assert github_server.count("pulls/create") == 1
    assert len([i for i in repo.issues.values() if i.pull]) == 1


def test_a_branch_pushed_to_between_the_read_and_the_move_is_not_overwritten(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    repo.refs[BRANCH] = base
    github_server.fail("git/update-ref", 422, {"message": "Update is not a fast forward"})
    with pytest.raises(PublishError, match="moved while Holon published") as caught:
        publish_change(gh, LOGIN, request(base), patch)
    assert caught.value.reason == "moved"
    assert repo.refs[BRANCH] == base
    assert "pulls/create" not in github_server.operations()


def test_a_tree_github_built_differently_stops_before_the_commit(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    github_server.fail("git/create-tree", 201, {"sha": "0" * 40, "tree": []})
    with pytest.raises(PublishError, match="GitHub built tree 000000000000") as caught:
        publish_change(gh, LOGIN, request(base), patch)
    assert caught.value.reason == "mismatch"
    assert github_server.operations()[-1] == "git/create-tree"
    assert BRANCH not in repo.refs


def test_a_base_tree_github_lists_only_in_part_is_refused(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    _, base, patch = setup
    github_server.fail("git/get-tree", 200, {"sha": "1" * 40, "tree": [], "truncated": True})
    with pytest.raises(PublishError, match="only in part") as caught:
        publish_change(gh, LOGIN, request(base), patch)
    assert caught.value.reason == "too-large"
    assert not [c for c in github_server.calls if c.method in WRITES]


def test_a_blob_lost_to_a_5xx_is_simply_made_again(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    github_server.fail("git/create-blob", 500, done=True)
    outcome = publish_change(gh, LOGIN, request(base), patch)
    assert github_server.count("git/create-blob") == 2  # the same blob: nothing doubled
    assert repo.refs[BRANCH] == outcome.output["commit"]


def test_a_refused_push_names_the_permission(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    _, base, patch = setup
    github_server.fail("git/create-ref", 403, {"message": "Resource not accessible by integration"})
    with pytest.raises(PermissionDenied, match=r"permissions: contents: write"):
        publish_change(gh, LOGIN, request(base), patch)


def test_a_push_refused_with_a_404_names_the_permission(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    _, base, patch = setup
    github_server.fail("git/create-ref", 404, {"message": "Not Found"})
    with pytest.raises(NotFound, match=r"`permissions: contents: write`"):
        publish_change(gh, LOGIN, request(base), patch)


def test_a_repository_without_drafts_gets_a_ready_pull_request_and_a_note(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    body = {
        "message": "Validation Failed",
        "errors": [{"message": "Draft pull requests are not supported in this repository."}],
    }
    github_server.fail("pulls/create", 422, body)
    outcome = publish_change(gh, LOGIN, request(base), patch)
    assert outcome.note == "the repository takes no draft pull requests: opened as ready"
    pull = repo.issues[outcome.output["pull_request"]].pull
    assert pull is not None
    assert not pull.draft


def test_someone_elses_pull_request_on_the_branch_is_left_as_it_is(
    gh: github.Github, github_server: LoopbackGitHub, setup: tuple[Repo, str, bytes]
) -> None:
    repo, base, patch = setup
    repo.refs[BRANCH] = base
    theirs = repo.add_pull("My own take", head="holon/issue-1", user="octocat", body="mine")
    outcome = publish_change(gh, LOGIN, request(base), patch)
    assert outcome.output["pull_request"] == theirs.number
    assert outcome.output["pull_request_action"] == "kept"
    assert "by octocat already has holon/issue-1" in outcome.note
    assert theirs.body == "mine"
    assert "pulls/update" not in github_server.operations()
