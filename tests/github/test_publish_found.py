"""What GitHub holds of a publish cut short (holon/github/publish_found.py), looked up on the
loopback GitHub: a pr-fix's commit on the branch (this run's by its parent and trailer, or
another's), none, and a look-up GitHub refuses; read-only throughout."""

from __future__ import annotations

from datetime import UTC, datetime

import github

from holon.github.marker import format_marker
from holon.github.publish_found import found_on_github
from holon.github.publish_text import RUN_TRAILER
from holon.intent import ActionIntent, Target, make_intent
from tests.github.test_publish import LOGIN, REPO, gh  # noqa: F401  (a fixture)
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.faults import Fault
from tests.support.github_fake.state import Repo

BRANCH = "holon/issue-1"
RUN = "act_fix-1"


def pull(repo: Repo) -> tuple[int, str]:
    repo.add_issue("Crash")
    repo.refs[f"heads/{BRANCH}"] = repo.refs["heads/main"]
    repo.put_file("calc.py", b"x\n", branch=BRANCH, message="Fix #1")
    made = repo.add_pull("Fix #1", head=BRANCH)
    return made.number, repo.refs[f"heads/{BRANCH}"]


def publish_of(number: int, head: str, skill: str = "github-pr-fix") -> ActionIntent:
    return make_intent(
        type_="run_skill",
        target=Target(repo=REPO, kind="pull_request", id=str(number)),
        args={
            "skill": "github-publish",
            "inputs": {"run": RUN, "skill": skill, "actor": "octocat"},
            "head_sha": head,
        },
        reason="rule publish-settled-run matched holon.run.settled",
        decider="policy",
        event_key="holon:run.settled:act_fix:1",
        event_id="evt_x",
        at=datetime(2026, 1, 1, tzinfo=UTC),
        skills={"github-publish"},
    )


def test_the_runs_fix_commit_on_the_branch_is_named(
    github_server: LoopbackGitHub,
    gh: github.Github,  # noqa: F811
) -> None:
    repo = github_server.state.repos[REPO]
    number, head = pull(repo)
    intent = publish_of(number, head)
    nothing = found_on_github(gh, LOGIN, "holon", intent)
    assert nothing is not None
    assert nothing.made is None
    assert nothing.lines == (f"no fix commit was pushed: branch {BRANCH} is still at {head}",)
    fix = repo.put_file("calc.py", b"y\n", branch=BRANCH, message=f"Fix\n\n{RUN_TRAILER}: {RUN}")
    found = found_on_github(gh, LOGIN, "holon", intent)
    assert found is not None
    assert found.made is not None
    assert found.made.sha == fix
    assert (
        found.lines[0]
        == f"the fix commit {fix} was pushed: branch {BRANCH} moved from {head} to it"
    )
    assert found.lines[1] == "review thread replies for it posted: 0"
    other = repo.put_file("calc.py", b"z\n", branch=BRANCH, message="someone else's")
    found = found_on_github(gh, LOGIN, "holon", publish_of(number, fix))
    assert found is not None
    assert found.made is None
    assert found.lines == (
        f"branch {BRANCH} moved from {fix} to {other}, a commit not of this run",
    )
    assert not [c for c in github_server.calls if c.method != "GET"]


def test_a_refused_look_up_says_so_and_what_to_look_at(
    github_server: LoopbackGitHub,
    gh: github.Github,  # noqa: F811
) -> None:
    number, head = pull(github_server.state.repos[REPO])
    github_server.faults.add(Fault("403", operation="pulls/list-reviews", method="GET", times=9))
    found = found_on_github(gh, LOGIN, "holon", publish_of(number, head, "github-review"))
    assert found is not None
    assert found.made is None
    (said,) = found.lines
    assert said.startswith("whether the review reached GitHub could not be looked up"), said
    assert said.endswith(f"look at pull request #{number} before asking again"), said


def test_only_a_publish_of_a_pull_requests_run_is_looked_up(
    github_server: LoopbackGitHub,
    gh: github.Github,  # noqa: F811
) -> None:
    number, head = pull(github_server.state.repos[REPO])
    assert (
        found_on_github(gh, LOGIN, "holon", publish_of(number, head, "github-issue-solve")) is None
    )
    assert found_on_github(gh, LOGIN, "holon", publish_of(number, "not-a-sha")) is None
    assert not github_server.calls


def solve_publish_of(number: int, run: str = RUN) -> ActionIntent:
    intent = publish_of(number, "0" * 40, "github-issue-solve")
    target = Target(repo=REPO, kind="issue", id=str(number))
    args = {"skill": "github-publish", "inputs": {"run": run, "skill": "github-issue-solve"}}
    return intent.model_copy(update={"target": target, "args": args})


def test_a_solves_branch_and_pull_request_are_named(
    github_server: LoopbackGitHub,
    gh: github.Github,  # noqa: F811
) -> None:
    """A solve cut short between its push and its pull request, or after both: its branch is
    found at this run's commit (its trailer), and Holon's pull request from it (its login and
    marker); another's commit or pull request is never taken for the run's."""
    repo = github_server.state.repos[REPO]
    issue = repo.add_issue("Crash").number
    intent = solve_publish_of(issue)
    nothing = found_on_github(gh, LOGIN, "holon", intent)
    assert nothing is not None
    assert nothing.made is None
    assert nothing.lines == (f"no fix commit was pushed: branch {BRANCH} does not exist",)
    repo.refs[f"heads/{BRANCH}"] = repo.refs["heads/main"]
    other = repo.put_file("calc.py", b"x\n", branch=BRANCH, message="someone else's")
    found = found_on_github(gh, LOGIN, "holon", intent)
    assert found is not None
    assert found.made is None
    assert found.lines == (
        f"no fix commit of this run was pushed: branch {BRANCH} is at {other}, another's",
    )
    fix = repo.put_file("calc.py", b"y\n", branch=BRANCH, message=f"Fix\n\n{RUN_TRAILER}: {RUN}")
    found = found_on_github(gh, LOGIN, "holon", intent)
    assert found is not None
    assert found.made is not None
    assert (found.made.sha, found.made.number) == (fix, None)
    assert found.lines == (
        f"the fix commit {fix} was pushed: branch {BRANCH} is at it",
        f"no pull request was opened from branch {BRANCH}",
    )
    body = format_marker("issue", str(issue), "holon", "github-issue-solve") + "\n\nFixes #1"
    theirs = repo.add_pull("Mine", head=BRANCH, body=body)  # by octocat, not Holon
    found = found_on_github(gh, LOGIN, "holon", intent)
    assert found is not None
    assert found.made is not None
    assert found.made.number is None
    assert found.lines[1].startswith(f"pull request #{theirs.number} from branch {BRANCH} is not")
    theirs.state = "closed"
    pull = repo.add_pull("Fix #1", head=BRANCH, body=body, user=LOGIN)
    found = found_on_github(gh, LOGIN, "holon", intent)
    assert found is not None
    assert found.made is not None
    assert (found.made.sha, found.made.number) == (fix, pull.number)
    assert found.made.url is not None
    assert found.made.url.endswith(f"/pull/{pull.number}")
    assert found.lines[1] == f"pull request #{pull.number} was opened ({found.made.url})"
    assert not [c for c in github_server.calls if c.method != "GET"]


def test_a_solves_refused_look_up_names_the_issue_and_the_branch(
    github_server: LoopbackGitHub,
    gh: github.Github,  # noqa: F811
) -> None:
    repo = github_server.state.repos[REPO]
    issue = repo.add_issue("Crash").number
    github_server.faults.add(Fault("403", operation="git/get-ref", method="GET", times=9))
    found = found_on_github(gh, LOGIN, "holon", solve_publish_of(issue))
    assert found is not None
    assert found.made is None
    (said,) = found.lines
    assert said.startswith("whether the fix commit and its pull request reached GitHub"), said
    assert said.endswith(f"look at issue #{issue} and branch {BRANCH} before asking again"), said
