"""A scenario's event payload: a shipped octokit example (`events/<event.action>.yaml`, trimmed
copies of GitHub's own examples, see events/README.md) with the scenario's changes applied.

Pure but for reading the shipped file. The changes name what a scenario usually varies (the
comment, the actor, the label, the review state, the check's conclusion, the head); `set` and
`unset` reach any other field by its dotted path.
"""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources
from typing import Any

from holon import yamlio
from holon.errors import InvalidInput
from holon.eval.scenario import Event

# Where each event keeps the body a scenario sets (a comment's, a review's, an issue's).
_BODY = {
    "issue_comment": "comment",
    "pull_request_review": "review",
    "pull_request_review_comment": "comment",
    "issues": "issue",
    "pull_request": "pull_request",
}
# The object the sender wrote, whose author is the actor (a label added to someone else's issue
# leaves the issue's author as it was).
_AUTHORED = {
    "issue_comment.created": "comment",
    "pull_request_review.submitted": "review",
    "pull_request_review_comment.created": "comment",
    "issues.opened": "issue",
    "pull_request.opened": "pull_request",
}


def event_names() -> list[str]:
    folder = resources.files("holon.eval").joinpath("events")
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


@cache
def _shipped(name: str) -> dict[str, Any]:
    folder = resources.files("holon.eval").joinpath("events")
    path = folder.joinpath(f"{name}.yaml")
    if not path.is_file():
        known = ", ".join(event_names())
        raise InvalidInput(f"event {name}: no shipped example (known: {known})")
    data = yamlio.load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)  # shipped data, checked by tests/eval
    return data


def github_event(name: str) -> str:
    """The X-GitHub-Event of `issue_comment.created`: `issue_comment`."""
    return name.partition(".")[0]


def payload_of(event: Event) -> dict[str, Any]:
    """A private copy of the shipped example with the scenario's changes."""
    payload = copy.deepcopy(_shipped(event.name))
    where = _BODY.get(github_event(event.name))
    authored = _AUTHORED.get(event.name)
    if event.body is not None:
        if where is None or not isinstance(payload.get(where), dict):
            raise InvalidInput(f"event {event.name}: has no body to set")
        payload[where]["body"] = event.body
    if event.actor is not None:
        sender = payload.setdefault("sender", {})
        sender.update(login=event.actor.login, type=event.actor.type)
        obj = payload.get(authored) if authored else None
        if isinstance(obj, dict):
            obj["user"] = {**obj.get("user", {}), "login": event.actor.login}
            obj["user"]["type"] = event.actor.type
            if event.actor.association is not None:
                obj["author_association"] = event.actor.association
    issue = payload.get("issue")
    if isinstance(issue, dict):
        if event.on_pull_request:
            issue["pull_request"] = {"merged_at": None}
        if event.number is not None:
            issue["number"] = event.number
    pull = payload.get("pull_request")
    if isinstance(pull, dict):
        if event.number is not None:
            pull["number"] = event.number
            if "number" in payload:
                payload["number"] = event.number
        if event.head_sha is not None:
            pull.setdefault("head", {})["sha"] = event.head_sha
    if event.label is not None:
        payload["label"] = {**payload.get("label", {}), "name": event.label}
    if event.review_state is not None:
        payload.setdefault("review", {})["state"] = event.review_state
    for check in ("check_suite", "check_run"):
        found = payload.get(check)
        if not isinstance(found, dict):
            continue
        if event.conclusion is not None:
            found["conclusion"] = event.conclusion
        if event.head_sha is not None:
            found["head_sha"] = event.head_sha
        if event.number is not None:
            for pr in found.get("pull_requests") or []:
                pr["number"] = event.number
    if event.repo is not None:
        payload.setdefault("repository", {})["full_name"] = event.repo
    for path, value in event.set.items():
        _put(payload, path, value, event.name)
    for path in event.unset:
        _remove(payload, path)
    return payload


def _walk(payload: dict[str, Any], path: str, name: str) -> tuple[dict[str, Any], str]:
    *parents, last = path.split(".")
    here: Any = payload
    for part in parents:
        nxt = here.get(part) if isinstance(here, dict) else None
        if nxt is None and isinstance(here, dict):
            nxt = here[part] = {}
        if not isinstance(nxt, dict):
            raise InvalidInput(f"event {name}: `{path}` is not inside an object")
        here = nxt
    return here, last


def _put(payload: dict[str, Any], path: str, value: Any, name: str) -> None:
    here, last = _walk(payload, path, name)
    here[last] = value


def _remove(payload: dict[str, Any], path: str) -> None:
    here: Any = payload
    *parents, last = path.split(".")
    for part in parents:
        here = here.get(part) if isinstance(here, dict) else None
    if isinstance(here, dict):
        here.pop(last, None)


__all__ = ["event_names", "github_event", "payload_of"]
