"""Publishing a run's change over real HTTP against the loopback GitHub: a real patch from the
runner's own diff becomes one commit, a branch and a draft pull request; the API calls are
counted (docs/github.md, "Publishing")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import github
import pytest

from holon.github.client import GitHubConfig, make_client
from holon.github.errors import PublishError
from holon.github.marker import parse_marker
from holon.github.publish import PublishPolicy, publish_change
from holon.github.publish_request import PublishRequest
from holon.github.publish_text import Actor
from tests.github.publish_support import remove, runner_patch, seed, write
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

TOKEN = "ghs_" + "f" * 36
REPO = "octocat/Hello-World"
LOGIN = "github-actions[bot]"
RUN = "20260101T000000Z-abcd1234"
BASE = {
    "README.md": b"# hello\n\nline 2\n",
    "src/app.py": b"def main():\n    return 1\n",
    "doomed.txt": b"bye\n",
    "logo.png": bytes(range(256)),
}
WRITES = ("POST", "PATCH", "PUT", "DELETE")


def edit(ws: Path) -> None:
    write(ws / "src/app.py", "def main():\n    return 0\n")
    write(ws / "src/new.py", "NEW = 1\n")
    write(ws / "logo.png", bytes(reversed(range(256))))
    remove(ws / "doomed.txt")


@pytest.fixture
def gh(github_server: LoopbackGitHub) -> Iterator[github.Github]:
    client = make_client(
        GitHubConfig(api_url=github_server.url, token=TOKEN, write_spacing=0.0)  # type: ignore[arg-type]
    )
    yield client
    client.close()


@pytest.fixture
def repo(github_server: LoopbackGitHub) -> Repo:
    state = github_server.state.repos[REPO]
    state.add_issue("Crash on start; fixes #99", user="octocat")  # 1
    return state


def request(base: str, **kw: Any) -> PublishRequest:
    values: dict[str, Any] = {
        "repo": REPO,
        "kind": "issue",
        "number": 1,
        "title": "Crash on start; fixes #99",
        "skill": "github-issue-solve",
        "run_id": RUN,
        "base_sha": base,
        "base_branch": "main",
        "actor": Actor("octocat", 583231),
        **kw,
    }
    return PublishRequest.model_validate(values)


def files_at(repo: Repo, sha: str) -> dict[str, bytes]:
    return {p: repo.objects[e["sha"]]["data"] for p, e in repo.files(sha).items()}


def test_an_issue_run_becomes_a_commit_a_branch_and_a_draft_pull_request(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    base = seed(repo, BASE)
    patch = runner_patch(tmp_path, BASE, edit)
    outcome = publish_change(gh, LOGIN, request(base), patch, "Fixed it. Closes #5 @someone")
    assert outcome.performed
    commit = repo.refs["heads/holon/issue-1"]
    assert outcome.output == {
        "branch": "holon/issue-1",
        "commit": commit,
        "base": base,
        "files": 4,
        "pull_request": 2,
        "pull_request_url": f"https://github.com/{REPO}/pull/2",
        "pull_request_action": "created",
    }
    assert repo.get(commit, "commit")["parents"] == [base]
    assert files_at(repo, commit) == {
        "README.md": BASE["README.md"],
        "src/app.py": b"def main():\n    return 0\n",
        "src/new.py": b"NEW = 1\n",
        "logo.png": bytes(reversed(range(256))),
    }
    message = repo.get(commit, "commit")["message"]
    assert message.splitlines()[0] == "Fix #1: Crash on start; fixes # 99"
    assert message.endswith(
        f"Holon-Run: {RUN}\nCo-authored-by: octocat <583231+octocat@users.noreply.github.com>\n"
    )
    pull = repo.issues[2]
    assert pull.pull is not None
    assert (pull.pull.head, pull.pull.base, pull.pull.draft) == ("holon/issue-1", "main", True)
    assert pull.user == LOGIN
    marker = parse_marker(pull.body)
    assert marker is not None
    assert (marker.subject, marker.skill) == ("issue:1", "github-issue-solve")
    assert "\nFixes #1\n" in pull.body
    # Fenced, inert, and the mention broken where the body is written (neutralize.py).
    assert "```markdown\nFixed it. Closes #5 @\u200bsomeone\n```" in pull.body
    # The calls: the branch read, the base, the blobs the patch reads (not the new file's),
    # one blob for the binary file (text goes inline), the tree, the commit, the branch, the PR.
    assert github_server.operations() == [
        "git/get-ref",
        "git/get-commit",
        "git/get-tree",
        "git/get-blob",
        "git/get-blob",
        "git/get-blob",
        "git/create-blob",
        "git/create-tree",
        "git/create-commit",
        "git/create-ref",
        "pulls/list",
        "pulls/create",
    ]
    assert github_server.last("git/create-ref").json == {
        "ref": "refs/heads/holon/issue-1",
        "sha": commit,
    }
    # The token travelled in the header only.
    assert all(TOKEN not in c.path and TOKEN.encode() not in c.body for c in github_server.calls)


def test_publishing_the_same_run_again_changes_nothing(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    base = seed(repo, BASE)
    patch = runner_patch(tmp_path, BASE, edit)
    first = publish_change(gh, LOGIN, request(base), patch, "summary")
    github_server.calls.clear()
    again = publish_change(gh, LOGIN, request(base), patch, "summary")
    assert not again.performed
    assert again.output == first.output | {"pull_request_action": "unchanged"}
    assert github_server.operations() == ["git/get-ref", "git/get-commit", "pulls/list"]
    # A new summary updates Holon's own pull request instead of opening a second one.
    github_server.calls.clear()
    third = publish_change(gh, LOGIN, request(base), patch, "a better summary")
    assert third.output["pull_request_action"] == "updated"
    assert github_server.operations()[-1] == "pulls/update"
    assert len([i for i in repo.issues.values() if i.pull]) == 1


def test_a_branch_someone_else_moved_is_refused_before_anything_is_written(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    base = seed(repo, BASE)
    repo.refs["heads/holon/issue-1"] = repo.put_file("other.txt", b"x", "main")
    patch = runner_patch(tmp_path, BASE, edit)
    with pytest.raises(PublishError, match=r"branch holon/issue-1 is at \w+, not at") as caught:
        publish_change(gh, LOGIN, request(base), patch)
    assert caught.value.reason == "moved"
    assert not [c for c in github_server.calls if c.method in WRITES]


def test_a_branch_at_the_base_is_fast_forwarded(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    base = seed(repo, BASE)
    repo.refs["heads/holon/issue-1"] = base
    outcome = publish_change(gh, LOGIN, request(base), runner_patch(tmp_path, BASE, edit))
    assert repo.refs["heads/holon/issue-1"] == outcome.output["commit"]
    assert github_server.last("git/update-ref").json == {
        "sha": outcome.output["commit"],
        "force": False,
    }


def test_a_pr_fix_run_is_pushed_to_the_pull_requests_own_branch(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    head = seed(repo, BASE)
    repo.refs["heads/feature/fix"] = head
    repo.refs["heads/main"] = repo.get(head, "commit")["parents"][0]
    repo.add_pull("Fix the crash", head="feature/fix")  # 2
    patch = runner_patch(tmp_path, BASE, edit)
    fix = request(head, kind="pull_request", number=2, skill="github-pr-fix", base_branch=None)
    outcome = publish_change(gh, LOGIN, fix, patch)
    commit = repo.refs["heads/feature/fix"]
    assert outcome.output == {"branch": "feature/fix", "commit": commit, "base": head, "files": 4}
    assert repo.get(commit, "commit")["parents"] == [head]
    assert repo.get(commit, "commit")["message"].startswith("Address feedback on #2: ")
    assert github_server.operations() == [
        "pulls/get",
        "git/get-ref",
        "git/get-commit",
        "git/get-tree",
        *["git/get-blob"] * 3,
        "git/create-blob",
        "git/create-tree",
        "git/create-commit",
        "git/update-ref",
    ]


def test_a_pr_fix_whose_pull_request_moved_or_lives_in_a_fork_is_refused(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    head = seed(repo, BASE)
    repo.refs["heads/feature/fix"] = head
    pull = repo.add_pull("Fix the crash", head="feature/fix")
    patch = runner_patch(tmp_path, BASE, edit)
    fix = request(head, kind="pull_request", number=2, skill="github-pr-fix", base_branch=None)
    assert pull.pull is not None
    later = repo.put_file("later.txt", b"later", "feature/fix")  # a push moves the PR's head
    assert pull.pull.head_sha == later
    with pytest.raises(PublishError, match=r"pull request #2 moved") as moved:
        publish_change(gh, LOGIN, fix, patch)
    assert moved.value.reason == "moved"
    pull.pull.head_sha, pull.pull.fork = head, "someone/Hello-World"
    with pytest.raises(PublishError, match=r"branch is in someone/Hello-World") as fork:
        publish_change(gh, LOGIN, fix, patch)
    assert fork.value.reason == "not-allowed"
    assert not [c for c in github_server.calls if c.method in WRITES]


def test_an_empty_patch_is_an_explicit_failure_with_no_call(
    gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    base = seed(repo, BASE)
    with pytest.raises(PublishError, match="the run changed nothing") as caught:
        publish_change(gh, LOGIN, request(base), b"")
    assert caught.value.reason == "empty"
    assert github_server.calls == []


def test_workflow_changes_are_refused_unless_the_policy_allows_them(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub, repo: Repo
) -> None:
    base = seed(repo, BASE)

    def add_workflow(ws: Path) -> None:
        edit(ws)
        write(ws / ".github/workflows/ci.yml", "on: push\n")

    patch = runner_patch(tmp_path, BASE, add_workflow)
    with pytest.raises(PublishError, match="allow_workflow_changes: true") as caught:
        publish_change(gh, LOGIN, request(base), patch)
    assert caught.value.reason == "workflow"
    assert caught.value.evidence == (".github/workflows/ci.yml",)
    assert github_server.calls == []
    allowed = PublishPolicy(allow_workflow_changes=True)
    outcome = publish_change(gh, LOGIN, request(base), patch, policy=allowed)
    assert ".github/workflows/ci.yml" in repo.files(outcome.output["commit"])


def test_the_policy_chooses_the_link_the_co_author_and_the_draft(
    tmp_path: Path, gh: github.Github, repo: Repo
) -> None:
    base = seed(repo, BASE)
    policy = PublishPolicy(link="refs", co_author="none", draft=False)
    outcome = publish_change(
        gh, LOGIN, request(base), runner_patch(tmp_path, BASE, edit), policy=policy
    )
    message = repo.get(outcome.output["commit"], "commit")["message"]
    assert message.startswith("Work on #1: ")  # no closing keyword for the issue either
    assert "Co-authored-by" not in message
    pull = repo.issues[2]
    assert pull.pull is not None
    assert not pull.pull.draft
    assert "\nRefs #1\n" in pull.body
