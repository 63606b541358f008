"""REST listings as the webhook payloads GitHub would have sent for them (pure).

A tick reconciles what a dropped run may have missed by listing it through the REST API; each
item becomes the payload of the live event it stands for, so `holon.gateway.github.normalize`
gives it the live event's dedupe key (a command seen live and again here is handled once). A
payload keeps only what decisions need: identities, times, states, the author, the body that
may hold a command. Every field is read defensively (GitHub's answers are not trusted to be
well-formed); an item missing what its event needs is None, and left out.
"""

from __future__ import annotations

from typing import Any


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def user(value: Any) -> dict[str, Any] | None:
    """A user as a payload's `user`/`sender`: login and type only."""
    found = _obj(value)
    login = _str(found.get("login"))
    if login is None:
        return None
    kind = _str(found.get("type")) or ("Bot" if login.endswith("[bot]") else "User")
    return {"login": login, "type": kind}


def login_of(item: Any) -> str | None:
    found = user(_obj(item).get("user"))
    return found["login"] if found else None


def _repository(repo: str) -> dict[str, Any]:
    return {"full_name": repo}


def comment_created(
    repo: str, comment: dict[str, Any], number: int, *, pull: bool
) -> dict[str, Any] | None:
    """`issue_comment` `created` for a comment of `issues/list-comments-for-repo` on issue (or
    pull request, `pull`) `number`."""
    ident, author = _int(comment.get("id")), user(comment.get("user"))
    created = _str(comment.get("created_at"))
    if ident is None or author is None or created is None:
        return None
    issue: dict[str, Any] = {"number": number}
    if pull:
        issue["pull_request"] = {"url": f"/repos/{repo}/pulls/{number}"}
    return {
        "action": "created",
        "issue": issue,
        "comment": {
            "id": ident,
            "body": comment.get("body") if isinstance(comment.get("body"), str) else "",
            "user": author,
            "author_association": _str(comment.get("author_association")),
            "created_at": created,
            "updated_at": _str(comment.get("updated_at")) or created,
        },
        "repository": _repository(repo),
        "sender": author,
    }


def _branch(value: Any) -> dict[str, Any]:
    found = _obj(value)
    return {
        "ref": _str(found.get("ref")),
        "sha": _str(found.get("sha")),
        "repo": {"full_name": _str(_obj(found.get("repo")).get("full_name"))},
    }


def pull_request(pull: dict[str, Any]) -> dict[str, Any] | None:
    """A pull request of `pulls/list` as a payload's `pull_request`."""
    number, head = _int(pull.get("number")), _branch(pull.get("head"))
    updated = _str(pull.get("updated_at"))
    if number is None or head["sha"] is None or updated is None:
        return None
    return {
        "number": number,
        "state": _str(pull.get("state")),
        "draft": pull.get("draft") is True,
        "title": pull.get("title") if isinstance(pull.get("title"), str) else "",
        "user": user(pull.get("user")),
        "author_association": _str(pull.get("author_association")),
        "head": head,
        "base": _branch(pull.get("base")),
        "created_at": _str(pull.get("created_at")),
        "updated_at": updated,
    }


def pull_request_event(repo: str, pull: dict[str, Any], action: str) -> dict[str, Any] | None:
    """`pull_request` `opened` or `synchronize` (to the current head) for a listed pull
    request."""
    shaped = pull_request(pull)
    if shaped is None:
        return None
    payload: dict[str, Any] = {
        "action": action,
        "number": shaped["number"],
        "pull_request": shaped,
        "repository": _repository(repo),
    }
    if action == "synchronize":
        payload["after"] = shaped["head"]["sha"]
    if shaped["user"] is not None and action == "opened":
        payload["sender"] = shaped["user"]
    return payload


def review_submitted(
    repo: str, pull: dict[str, Any], review: dict[str, Any]
) -> dict[str, Any] | None:
    """`pull_request_review` `submitted` for a review of `pulls/list-reviews`."""
    shaped, ident, author = pull_request(pull), _int(review.get("id")), user(review.get("user"))
    submitted, state = _str(review.get("submitted_at")), _str(review.get("state"))
    if shaped is None or ident is None or author is None or submitted is None or state is None:
        return None
    return {
        "action": "submitted",
        "review": {
            "id": ident,
            "body": review.get("body") if isinstance(review.get("body"), str) else None,
            # Webhooks spell the state in lower case (REST in upper case).
            "state": state.lower(),
            "user": author,
            "author_association": _str(review.get("author_association")),
            "submitted_at": submitted,
            "commit_id": _str(review.get("commit_id")),
        },
        "pull_request": shaped,
        "repository": _repository(repo),
        "sender": author,
    }


def check_run_completed(repo: str, run: dict[str, Any], number: int) -> dict[str, Any] | None:
    """`check_run` `completed` for a completed check run of `checks/list-for-ref` on the head
    of pull request `number`."""
    ident, head = _int(run.get("id")), _str(run.get("head_sha"))
    completed = _str(run.get("completed_at"))
    if ident is None or head is None or completed is None or run.get("status") != "completed":
        return None
    listed = run.get("pull_requests")
    numbers = {
        n
        for pr in (listed if isinstance(listed, list) else [])
        if (n := _int(_obj(pr).get("number"))) is not None
    }
    slug = _str(_obj(run.get("app")).get("slug"))
    payload: dict[str, Any] = {
        "action": "completed",
        "check_run": {
            "id": ident,
            "name": _str(run.get("name")),
            "head_sha": head,
            "status": "completed",
            "conclusion": _str(run.get("conclusion")),
            "started_at": _str(run.get("started_at")),
            "completed_at": completed,
            "pull_requests": [{"number": n} for n in sorted(numbers | {number})],
            "app": {"slug": slug} if slug else None,
        },
        "repository": _repository(repo),
    }
    if slug:
        # The app that completed it sends the event (its bot), as GitHub does.
        payload["sender"] = {"login": f"{slug}[bot]", "type": "Bot"}
    return payload


__all__ = [
    "check_run_completed",
    "comment_created",
    "login_of",
    "pull_request",
    "pull_request_event",
    "review_submitted",
    "user",
]
