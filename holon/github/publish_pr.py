"""The pull request of a published branch: opened as a draft, or the open one updated.

The branch's open pull request is looked up first (`pulls/list` by `owner:branch`). One that
Holon's login opened has its body brought up to date; one somebody else opened from Holon's
branch is left as it is (the note says so): Holon does not rewrite a person's description. A
create answered with a 5xx is looked up again by branch before it is sent again: one pull
request per branch, never two. A create GitHub refuses (422) because the branch has an open
pull request now is the same run published by another process at the same moment (one event
delivered to two jobs: both looked up, found none, and created; GitHub keeps one open pull
request per head and base and refuses the second): the one it opened is looked up and taken as
this publish's, as the look-up would have found it a moment later. A repository that does not
take draft pull requests gets a ready one, and the note says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from holon.github.body import COMMENT_LIMIT, fit
from holon.github.errors import Rejected
from holon.github.logins import same_login
from holon.github.neutralize import DEFAULT_RULES, OutputRules, neutralized
from holon.github.publish_api import RepoApi, write_once


@dataclass(frozen=True)
class PullResult:
    number: int
    url: str
    action: Literal["created", "updated", "unchanged", "kept"]
    note: str = ""


def find_pull(api: RepoApi, branch: str) -> dict[str, Any] | None:
    """The open pull request whose head is `branch` of this repository (1 call)."""
    params = {"head": f"{api.owner}:{branch}", "state": "open", "per_page": 10}
    for pull in api.call("pulls/list", "GET", "/pulls", params=params) or []:
        if (pull.get("head") or {}).get("repo", {}).get("full_name") == api.full_name:
            found: dict[str, Any] = pull
            return found
    return None


def open_or_update(
    api: RepoApi,
    login: str | None,
    branch: str,
    base_branch: str,
    title: str,
    body: str,
    draft: bool,
    rules: OutputRules = DEFAULT_RULES,
) -> PullResult:
    """2 calls: the lookup, then the create or the update (1 when the PR is someone else's
    or already says this; up to 2 more when the create is refused because it was opened
    meanwhile: the lookup again, and the update). The title and body are neutralized here,
    where they are written (`neutralize.py`): no command line, mention or outside link."""
    # Neutralizing lengthens a hostile body (`[.]`): cut again to GitHub's limit, safely.
    title, body = neutralized(title, rules), fit(neutralized(body, rules), COMMENT_LIMIT)
    existing = find_pull(api, branch)
    if existing is not None:
        return _existing(api, login, branch, body, existing)
    notes: list[str] = []

    def create() -> dict[str, Any]:
        payload = {"title": title, "head": branch, "base": base_branch, "body": body}
        try:
            made: dict[str, Any] = api.call(
                "pulls/create", "POST", "/pulls", body={**payload, "draft": draft}
            )
        except Rejected as exc:
            if not draft or "draft" not in str(exc).lower():
                raise
            notes.append("the repository takes no draft pull requests: opened as ready")
            made = api.call("pulls/create", "POST", "/pulls", body=payload)
        return made

    try:
        made = write_once(create, lambda: find_pull(api, branch))
    except Rejected:
        # Opened meanwhile by another process (GitHub: "A pull request already exists"):
        # that one is this publish's. Refused for another reason: no pull request, said.
        raced = find_pull(api, branch)
        if raced is None:
            raise
        found = _existing(api, login, branch, body, raced)
        said = [
            "opened meanwhile, by another job of this run or someone else",
            *([found.note] if found.note else []),
        ]
        return PullResult(found.number, found.url, found.action, "; ".join(said))
    return PullResult(
        int(made["number"]), str(made.get("html_url", "")), "created", "; ".join(notes)
    )


def _existing(
    api: RepoApi, login: str | None, branch: str, body: str, existing: dict[str, Any]
) -> PullResult:
    """The branch's open pull request: its body brought up to date when Holon opened it (1
    call, none when it already says this); left as it is when somebody else did."""
    number, url = int(existing["number"]), str(existing.get("html_url", ""))
    author = (existing.get("user") or {}).get("login")
    if not same_login(author, login):
        note = f"an open pull request by {author} already has {branch}; left as it is"
        return PullResult(number, url, "kept", note)
    if existing.get("body") == body:
        return PullResult(number, url, "unchanged")
    api.call("pulls/update", "PATCH", f"/pulls/{number}", body={"body": body})
    return PullResult(number, url, "updated")
