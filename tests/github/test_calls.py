"""How many API calls each GitHub primitive costs through Holon's client (docs/github.md,
"API calls"), over real HTTP against the loopback GitHub, which also checks that each one
reaches a route GitHub has and reads back what it wrote."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import Any

import github
import pytest
from github.InputGitTreeElement import InputGitTreeElement

from holon.github.client import GitHubConfig, make_client
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

TOKEN = "ghs_" + "f" * 36
REPO = "octocat/Hello-World"


@pytest.fixture
def gh(github_server: LoopbackGitHub) -> Iterator[github.Github]:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start", labels=["bug"])  # 1
    repo.refs["heads/holon/issue-1"] = repo.put_file("fix.txt", b"fixed\n", "main")
    repo.add_pull("Fix the crash", head="holon/issue-1")  # 2
    # A branch with no pull request yet ("open pull"; GitHub keeps one open per head and base).
    repo.refs["heads/holon/issue-3"] = repo.refs["heads/holon/issue-1"]
    repo.add_comment(1, "first", "octocat")
    repo.permissions["octocat"] = "write"
    client = make_client(
        GitHubConfig(api_url=github_server.url, token=TOKEN, write_spacing=0.0)  # type: ignore[arg-type]
    )
    yield client
    client.close()


def _move(repo: Any, name: str, sha: str, force: bool) -> None:
    ref = repo.get_git_ref(name)
    assert ref.object.sha  # completes the lazy object
    ref.edit(sha, force=force)


def _tree(repo: Any, state: Repo) -> Any:
    base = repo.get_git_tree(state.objects[state.refs["heads/main"]]["tree"])
    blob = repo.create_git_blob("new\n", "utf-8")
    return repo.create_git_tree(
        [InputGitTreeElement("new.txt", "100644", "blob", sha=blob.sha)], base
    )


# (name, what it does, the operations it costs, in order)
PRIMITIVES: list[tuple[str, Callable[[Any, Repo], object], list[str]]] = [
    ("comment", lambda r, s: r.get_issue(1).create_comment("hi"), ["issues/create-comment"]),
    (
        "edit comment",
        lambda r, s: r.get_issue(1).get_comment(min(s.comments)).edit("x"),
        ["issues/update-comment"],
    ),
    ("list comments", lambda r, s: list(r.get_issue(1).get_comments()), ["issues/list-comments"]),
    (
        "repository comments",
        lambda r, s: list(r.get_issues_comments()),
        ["issues/list-comments-for-repo"],
    ),
    ("add labels", lambda r, s: r.get_issue(1).add_to_labels("holon"), ["issues/add-labels"]),
    (
        "remove label",
        lambda r, s: r.get_issue(1).remove_from_labels("bug"),
        ["issues/remove-label"],
    ),
    (
        "list labels",
        lambda r, s: list(r.get_issue(1).get_labels()),
        ["issues/list-labels-on-issue"],
    ),
    ("close issue", lambda r, s: r.get_issue(1).edit(state="closed"), ["issues/update"]),
    ("read issue", lambda r, s: r.get_issue(1).title, ["issues/get"]),
    (
        "open pull",
        lambda r, s: r.create_pull(title="t", body="b", head="holon/issue-3", base="main"),
        ["pulls/create"],
    ),
    ("find pulls", lambda r, s: list(r.get_pulls(head="octocat:holon/issue-1")), ["pulls/list"]),
    ("merge", lambda r, s: r.get_pull(2).merge(), ["pulls/merge"]),
    ("update pull", lambda r, s: r.get_pull(2).edit(body="more"), ["pulls/update"]),
    (
        "review",
        lambda r, s: r.get_pull(2).create_review(body="ok", event="COMMENT"),
        ["pulls/create-review"],
    ),
    ("list reviews", lambda r, s: list(r.get_pull(2).get_reviews()), ["pulls/list-reviews"]),
    (
        "request reviewers",
        lambda r, s: r.get_pull(2).create_review_request(reviewers=["octocat"]),
        ["pulls/request-reviewers"],
    ),
    (
        "check run",
        lambda r, s: r.create_check_run("holon", s.refs["heads/main"]),
        ["checks/create"],
    ),
    (
        "finish check run",
        lambda r, s: r.get_check_run(r.create_check_run("holon", s.refs["heads/main"]).id).edit(
            conclusion="success"
        ),
        ["checks/create", "checks/update"],
    ),
    (
        "check runs of a ref",
        lambda r, s: list(r.get_commit(s.refs["heads/main"]).get_check_runs()),
        ["checks/list-for-ref"],
    ),
    (
        "status",
        lambda r, s: r.get_commit(s.refs["heads/main"]).create_status("success", context="holon"),
        ["repos/create-commit-status"],
    ),
    (
        "combined status",
        lambda r, s: r.get_commit(s.refs["heads/main"]).get_combined_status().state,
        ["repos/get-combined-status-for-ref"],
    ),
    (
        "permission",
        lambda r, s: r.get_collaborator_permission("octocat"),
        ["repos/get-collaborator-permission-level"],
    ),
    ("read ref", lambda r, s: r.get_git_ref("heads/main").object.sha, ["git/get-ref"]),
    (
        "branch",
        lambda r, s: r.create_git_ref("refs/heads/holon/issue-9", s.refs["heads/main"]),
        ["git/create-ref"],
    ),
    (
        "commit a tree",
        lambda r, s: r.create_git_commit(
            "m", _tree(r, s), [r.get_git_commit(s.refs["heads/main"])]
        ),
        [
            "git/get-tree",
            "git/create-blob",
            "git/create-tree",
            "git/get-commit",
            "git/create-commit",
        ],
    ),
    (
        # A lazy ref is addressed `git/ref/...`, where GitHub takes no PATCH: read it first
        # (its body gives `git/refs/...`); see test_a_lazy_ref_cannot_be_moved.
        "move branch",
        lambda r, s: _move(r, "heads/holon/issue-1", s.refs["heads/main"], force=True),
        ["git/get-ref", "git/update-ref"],
    ),
    ("read file", lambda r, s: r.get_contents("fix.txt").decoded_content, ["repos/get-content"]),
    (
        "write file",
        lambda r, s: r.create_file("docs/new.md", "m", "text"),
        ["repos/create-or-update-file-contents"],
    ),
    (
        "workflow dispatch",
        lambda r, s: r.get_workflow("holon.yml").create_dispatch("main", {"a": "1"}),
        ["actions/create-workflow-dispatch"],
    ),
    (
        "repository dispatch",
        lambda r, s: r.create_repository_dispatch("holon", {"n": 1}),
        ["repos/create-dispatch-event"],
    ),
]


@pytest.mark.parametrize(("name", "call", "operations"), PRIMITIVES, ids=[p[0] for p in PRIMITIVES])
def test_calls_per_primitive(
    gh: github.Github,
    github_server: LoopbackGitHub,
    name: str,
    call: Callable[[Any, Repo], object],
    operations: list[str],
) -> None:
    call(gh.get_repo(REPO), github_server.state.repos[REPO])
    assert github_server.operations() == operations


def test_what_was_written_is_there(gh: github.Github, github_server: LoopbackGitHub) -> None:
    repo, state = gh.get_repo(REPO), github_server.state.repos[REPO]
    repo.get_issue(1).add_to_labels("holon")
    repo.get_issue(1).remove_from_labels("bug")
    assert state.issues[1].labels == ["holon"]
    assert repo.get_pull(2).merge().merged
    assert state.issues[2].state == "closed"
    assert state.refs["heads/main"] == state.issues[2].pull.merge_commit_sha  # type: ignore[union-attr]
    created = repo.create_file("docs/new.md", "m", "text")
    assert base64.b64decode(repo.get_contents("docs/new.md").content) == b"text"
    assert created["commit"].sha == state.refs["heads/main"]
    assert repo.get_collaborator_permission("octocat") == "write"
    assert repo.get_collaborator_permission("stranger") == "none"
    assert repo.get_workflow("holon.yml").create_dispatch("main", {"a": "1"})
    assert state.dispatches[-1]["inputs"] == {"a": "1"}


def test_git_refuses_what_github_refuses(gh: github.Github, github_server: LoopbackGitHub) -> None:
    repo, state = gh.get_repo(REPO), github_server.state.repos[REPO]
    old_main = state.refs["heads/main"]
    state.put_file("other.txt", b"x", "main")
    with pytest.raises(github.GithubException) as caught:
        _move(repo, "heads/main", old_main, force=False)  # backwards
    assert caught.value.status == 422
    with pytest.raises(github.GithubException) as caught:
        repo.create_git_ref("refs/heads/main", old_main)
    assert caught.value.status == 422
    with pytest.raises(github.UnknownObjectException):
        repo.get_git_ref("heads/nope").object  # noqa: B018
    with pytest.raises(github.GithubException) as caught:
        repo.get_pull(2).merge(sha="0" * 40)
    assert caught.value.status == 409


def test_a_lazy_ref_cannot_be_moved(gh: github.Github, github_server: LoopbackGitHub) -> None:
    """PyGithub's lazy ref is addressed `git/ref/{ref}` (how GitHub reads one), and its edit()
    sends PATCH there, a route GitHub does not have: the fake refuses it as GitHub would."""
    main = github_server.state.repos[REPO].refs["heads/main"]
    with pytest.raises(github.GithubException) as caught:
        gh.get_repo(REPO).get_git_ref("heads/holon/issue-1").edit(main, force=True)
    assert caught.value.status == 501
    assert github_server.violations == [
        "PATCH /repos/octocat/Hello-World/git/ref/heads/holon/issue-1: "
        "a route GitHub's REST API does not have"
    ]
    github_server.violations.clear()
