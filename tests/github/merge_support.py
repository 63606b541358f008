"""Shared set-up for the facts and merge tests: a client on a fake GitHub, GitHubFacts over it,
and a Holon pull request in the loopback GitHub with reviews and checks to taste."""

from __future__ import annotations

from typing import Any

from holon.github.client import GitHubConfig, make_client
from holon.github.facts import GitHubFacts
from holon.github.rest import RestAccess
from tests.support.github_fake.state import Issue, Pull, Repo

TOKEN = "ghs_" + "f" * 36  # the github_server fixture's
REPO = "octocat/Hello-World"
HOLON = "github-actions[bot]"
RUN_ID = "4242"  # the Actions run Holon is in


def facts_for(url: str, **options: Any) -> GitHubFacts:
    config = GitHubConfig.model_validate({"api_url": url, "token": TOKEN, "write_spacing": 0.0})
    client = make_client(config, sleep=lambda seconds: None)  # retries wait no real time
    options.setdefault("login", HOLON)
    return GitHubFacts(RestAccess(client), **options)


def holon_pull(repo: Repo, title: str = "Fix the crash", branch: str = "holon/issue-1") -> Issue:
    """A pull request from a new commit on `branch` into main (issue 1 exists first)."""
    if not repo.issues:
        repo.add_issue("Crash on start")
    main = repo.refs["heads/main"]
    files = {
        **repo.files(main),
        "fix.txt": {"mode": "100644", "type": "blob", "sha": repo.blob(b"x")},
    }
    repo.refs[f"heads/{branch}"] = repo.commit("fix", repo.tree(files), [main])
    return repo.add_pull(title, head=branch)


def pull_of(issue: Issue) -> Pull:
    assert issue.pull is not None
    return issue.pull


def review(
    issue: Issue,
    login: str = "octocat",
    state: str = "APPROVED",
    association: str = "OWNER",
    commit: str | None = None,
) -> None:
    pull = pull_of(issue)
    pull.reviews.append(
        {
            "id": 9000 + len(pull.reviews),
            "user": login,
            "state": state,
            "author_association": association,
            "commit_id": commit or pull.head_sha,
        }
    )


def check(
    repo: Repo,
    sha: str,
    name: str = "ci",
    *,
    status: str = "completed",
    conclusion: str | None = "success",
    app_id: int = 15368,
    app: str | None = None,
    run_id: str | None = None,
) -> None:
    """A check run on `sha` by app `app_id` (slug `app`, else `app-<id>`); `run_id` makes it a
    job of that Actions run."""
    details = f"https://github.com/{REPO}/actions/runs/{run_id}/job/1" if run_id else None
    ident = repo.next_id()
    repo.check_runs[ident] = {
        "id": ident,
        "name": name,
        "head_sha": sha,
        "status": status,
        "conclusion": conclusion if status == "completed" else None,
        "app": {"id": app_id, "slug": app or f"app-{app_id}"},
        "details_url": details,
    }


def status(repo: Repo, sha: str, context: str, state: str) -> None:
    repo.statuses.append(
        {"id": repo.next_id(), "sha": sha, "state": state, "context": context, "creator": "ci-bot"}
    )


def require(repo: Repo, *contexts: str, branch: str = "main", app: int | None = None) -> None:
    """A ruleset on `branch` requiring `contexts` (GitHub's shape for the rule)."""
    checks = [{"context": c, **({"integration_id": app} if app else {})} for c in contexts]
    repo.rules.setdefault(branch, []).append(
        {
            "type": "required_status_checks",
            "ruleset_source_type": "Repository",
            "ruleset_source": REPO,
            "ruleset_id": 42,
            "parameters": {
                "required_status_checks": checks,
                "strict_required_status_checks_policy": False,
                "do_not_enforce_on_create": False,
            },
        }
    )
