"""Nothing is lost to Actions' own limits: a tick reconciles with a cursor (docs/reconcile.md).

A concurrency group keeps one running and one pending run and cancels older pending ones, and
scheduled runs can be delayed or dropped, so an event can reach no run at all. A tick (and any
run H1 chooses) lists what GitHub changed since the cursor, through the edge's one PyGithub
client (its retry policy, transport and error mapping):

- issue comments of the repository (`issues/list-comments-for-repo`, `since`, oldest first),
  each the `issue_comment` `created` event it stands for;
- open pull requests updated since (`pulls/list`, newest first, stopping at the cursor): a head
  no event of the state has seen is its `pull_request` `opened` (new since the cursor) or
  `synchronize` event;
- their reviews submitted since (`pulls/list-reviews`): `pull_request_review` `submitted`;
- the check runs of Holon's own pull requests' heads completed since (`checks/list-for-ref`):
  `check_run` `completed`.

Each is normalized as the live event would be (`via="actions"`), so its dedupe key is the live
event's: handled already, it is a duplicate the serve drops; missed, it is handled now, once. An
event whose key the state's dedupe records (or the cursor) hold already is not even returned.
Items written by Holon's own login are skipped (its own comments are not commands). At most
`limit` items per kind; a GitHub error is one warning line and holds the cursor back for that
kind, never a crash.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import github

from holon.actions import reconcile_payloads as shape
from holon.actions.cursor import (
    Cursor,
    advance,
    cursor_record,
    read_cursor,
    window_start,
)
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize, parse_time
from holon.github.errors import GitHubError, map_errors
from holon.github.facts import HOLON_BRANCH
from holon.github.logins import same_login
from holon.github.rest import repo_path
from holon.state.model import Record, ServeState
from holon.terminal import line

WRITER = "holon-action"
PER_PAGE = 100
PAGES = 10  # reviews of one pull request: GitHub lists them oldest first
# Kinds of the look, for the warning lines and the cursor.
COMMENTS, PULLS, REVIEWS, CHECKS = "comments", "pull requests", "reviews", "check runs"
# The pull_request events whose key records that a head was seen (gateway/github.py's rows).
_HEAD_ACTIONS = ("opened", "reopened", "ready_for_review", "synchronize")


def _stderr(message: str) -> None:
    print(f"holon: warning: {message}", file=sys.stderr)


@dataclass
class _Look:
    """One tick's look: what it found, and up to when each kind was read whole."""

    repo: str
    start: datetime
    now: datetime
    limit: int
    login: str | None
    warn: Callable[[str], None]
    requester: Any
    found: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    complete_until: list[datetime] = field(default_factory=list)

    def get(self, operation: str, path: str, **params: Any) -> Any:
        with map_errors(operation):
            _, data = self.requester.requestJsonAndCheck("GET", path, parameters=params or None)
        return data

    def failed(self, kind: str, exc: GitHubError | InvalidInput) -> None:
        self.warn(line(f"reconcile: {kind} not read: {exc}", limit=300))
        self.complete_until.append(self.start)  # not read: the next tick reads it again

    def cut(self, at: datetime | None) -> None:
        """A kind read only up to `at` (the limit was reached)."""
        self.complete_until.append(at if at is not None else self.start)

    def own(self, login: str | None) -> bool:
        return same_login(login, self.login)


def _time(value: Any) -> datetime | None:
    try:
        return parse_time(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _since(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _list(data: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(data, list):
        raise GitHubError(f"GitHub answered {what} with something not a list")
    return [item for item in data if isinstance(item, dict)]


def _number_of(url: Any) -> int | None:
    tail = url.rsplit("/", 1)[-1] if isinstance(url, str) else ""
    return int(tail) if tail.isascii() and tail.isdigit() and len(tail) <= 10 else None


def _comments(look: _Look, pulls: set[int]) -> None:
    operation = "issues/list-comments-for-repo"
    path = f"{repo_path(look.repo)}/issues/comments"
    params = {"since": _since(look.start), "sort": "updated", "direction": "asc"}
    try:
        items = _list(
            look.get(operation, path, per_page=min(look.limit, PER_PAGE), **params), operation
        )
    except GitHubError as exc:
        look.failed(COMMENTS, exc)
        return
    if len(items) >= min(look.limit, PER_PAGE):
        items = items[: look.limit]
        look.cut(_time(items[-1].get("updated_at")))
    kinds: dict[int, bool] = {}
    for comment in items:
        created = _time(comment.get("created_at"))
        number = _number_of(comment.get("issue_url"))
        # An edit of an older comment is no `created` event; Holon's own is no command.
        if created is None or created < look.start or number is None:
            continue
        if look.own(shape.login_of(comment)):
            continue
        if number not in kinds:
            kinds[number] = _is_pull(look, number, comment, pulls)
        payload = shape.comment_created(look.repo, comment, number, pull=kinds[number])
        if payload is not None:
            look.found.append(("issue_comment", payload))


def _is_pull(look: _Look, number: int, comment: dict[str, Any], pulls: set[int]) -> bool:
    """Whether a comment's issue is a pull request: its address says so on GitHub; else ask."""
    html = comment.get("html_url")
    if number in pulls or (isinstance(html, str) and f"/pull/{number}#" in html):
        return True
    try:
        issue = look.get("issues/get", f"{repo_path(look.repo)}/issues/{number}")
    except GitHubError:
        return False  # an issue then: a PR's command read as an issue's is refused, not lost
    return isinstance(issue, dict) and isinstance(issue.get("pull_request"), dict)


def _pulls(look: _Look) -> list[dict[str, Any]]:
    """Open pull requests updated since the look's start, newest first."""
    operation = "pulls/list"
    path = f"{repo_path(look.repo)}/pulls"
    params = {"state": "open", "sort": "updated", "direction": "desc"}
    try:
        items = _list(
            look.get(operation, path, per_page=min(look.limit, PER_PAGE), **params), operation
        )
    except GitHubError as exc:
        look.failed(PULLS, exc)
        return []
    recent = []
    for pull in items[: look.limit]:
        updated = _time(pull.get("updated_at"))
        if updated is None or updated < look.start:
            break  # sorted newest first: the rest are older than the cursor
        recent.append(pull)
    if len(recent) >= min(look.limit, PER_PAGE):
        look.cut(_time(recent[-1].get("updated_at")))
    return recent


def _head_seen(state: ServeState, repo: str, number: int, sha: str) -> bool:
    return any(
        state.get("dedupe", f"github:{repo}:pull_request.{action}:{number}:{sha}") is not None
        or state.get("dedupe", f"github:{repo}:pull_request.{action}:{number}:{action}:{sha}")
        is not None
        for action in _HEAD_ACTIONS
    )


def _pull_events(look: _Look, state: ServeState, pulls: list[dict[str, Any]]) -> None:
    for pull in pulls:
        number, head = pull.get("number"), shape.pull_request(pull)
        if not isinstance(number, int) or head is None:
            continue
        sha = head["head"]["sha"]
        if _head_seen(state, look.repo, number, sha):
            continue
        created = _time(pull.get("created_at"))
        action = "opened" if created is not None and created >= look.start else "synchronize"
        if action == "opened" and look.own(shape.login_of(pull)):
            continue  # Holon's own pull request: opening it asks nothing of Holon
        payload = shape.pull_request_event(look.repo, pull, action)
        if payload is not None:
            look.found.append(("pull_request", payload))


def _reviews(look: _Look, pulls: list[dict[str, Any]]) -> None:
    taken: list[tuple[datetime, dict[str, Any], dict[str, Any]]] = []
    for pull in pulls:
        number = pull.get("number")
        if not isinstance(number, int):
            continue
        path = f"{repo_path(look.repo)}/pulls/{number}/reviews"
        try:
            for review in _pages(look, "pulls/list-reviews", path):
                submitted = _time(review.get("submitted_at"))
                if submitted is None or submitted < look.start or review.get("state") == "PENDING":
                    continue
                if not look.own(shape.login_of(review)):
                    taken.append((submitted, pull, review))
        except GitHubError as exc:
            look.failed(REVIEWS, exc)
    taken.sort(key=lambda item: item[0])
    if len(taken) > look.limit:
        look.cut(taken[look.limit - 1][0])
    for _, pull, review in taken[: look.limit]:
        payload = shape.review_submitted(look.repo, pull, review)
        if payload is not None:
            look.found.append(("pull_request_review", payload))


def _pages(look: _Look, operation: str, path: str) -> Iterator[dict[str, Any]]:
    for page in range(1, PAGES + 1):
        items = _list(look.get(operation, path, per_page=PER_PAGE, page=page), operation)
        yield from items
        if len(items) < PER_PAGE:
            return


def _holon_pull(repo: str, shaped: dict[str, Any]) -> bool:
    """Holon's own pull request: a `holon/` head branch in this repository (not a fork's)."""
    head = shaped["head"]
    name, ref = head["repo"]["full_name"], head["ref"]
    same = isinstance(name, str) and name.casefold() == repo.casefold()
    return same and isinstance(ref, str) and ref.startswith(HOLON_BRANCH)


def _checks(look: _Look, pulls: list[dict[str, Any]]) -> None:
    taken: list[tuple[datetime, int, dict[str, Any]]] = []
    for pull in pulls:
        number, head = pull.get("number"), shape.pull_request(pull)
        if not isinstance(number, int) or head is None or not _holon_pull(look.repo, head):
            continue
        sha = head["head"]["sha"]
        operation = "checks/list-for-ref"
        path = f"{repo_path(look.repo)}/commits/{sha}/check-runs"
        try:
            data = look.get(operation, path, per_page=PER_PAGE, filter="latest")
            runs = _list(data.get("check_runs") if isinstance(data, dict) else None, operation)
        except GitHubError as exc:
            look.failed(CHECKS, exc)
            continue
        for run in runs:
            completed = _time(run.get("completed_at"))
            if completed is not None and completed >= look.start:
                taken.append((completed, number, run))
    taken.sort(key=lambda item: item[0])
    if len(taken) > look.limit:
        look.cut(taken[look.limit - 1][0])
    for _, number, run in taken[: look.limit]:
        payload = shape.check_run_completed(look.repo, run, number)
        if payload is not None:
            look.found.append(("check_run", payload))


def reconcile(
    state: ServeState,
    client: github.Github,
    repo: str,
    *,
    now: datetime,
    mention: str | None,
    limit: int = 100,
    login: str | None = None,
    warn: Callable[[str], None] | None = None,
    writer: str = WRITER,
) -> tuple[list[EventEnvelope], Record | None]:
    """The events a dropped run may have missed since the cursor, oldest first (each with the
    live event's dedupe key, none the state has handled), and the new cursor record to put
    once the serve has handled them. `login` is Holon's own (its items are skipped); `warn`
    hears one line per kind GitHub did not answer (default: standard error)."""
    if now.tzinfo is None:
        raise ValueError("reconcile needs a timezone-aware 'now'")
    if limit < 1:
        raise ValueError("reconcile's limit is at least 1")
    warn = warn or _stderr
    try:
        repo_path(repo)  # a name GitHub could not have is refused before any call
    except GitHubError as exc:
        warn(line(f"reconcile: nothing read: {exc}", limit=300))
        return [], None
    cursor = read_cursor(state, now)
    if cursor is None:
        if state.get("meta", "reconcile_cursor") is not None:
            warn("reconcile: the stored cursor is not one Holon wrote: starting again from now")
        # No backfill: without dedupe records for them, old commands would be answered twice.
        return [], cursor_record(Cursor(now.replace(microsecond=0)), now=now, writer=writer)
    start = window_start(cursor, now)
    look = _Look(repo, start, now, limit, login, warn, client.requester)
    pulls = _pulls(look)
    _comments(look, {p["number"] for p in pulls if isinstance(p.get("number"), int)})
    _pull_events(look, state, pulls)
    _reviews(look, pulls)
    _checks(look, pulls)
    envelopes: dict[str, EventEnvelope] = {}
    for event, payload in look.found:
        try:
            env = normalize(
                event, payload, via="actions", received_at=now, repository=repo, mention=mention
            )
        except InvalidInput as exc:
            warn(line(f"reconcile: a listed {event} was left out: {exc}", limit=300))
            continue
        if env.dedupe_key in cursor.seen or state.get("dedupe", env.dedupe_key) is not None:
            continue  # reported by an earlier tick, or handled: nothing to do twice
        envelopes[env.dedupe_key] = env
    found = sorted(envelopes.values(), key=lambda e: (e.at, e.dedupe_key))
    moved = advance(
        cursor.seen,
        [(e.dedupe_key, e.at) for e in found],
        now=now,
        start=start,
        complete_until=look.complete_until,
    )
    return found, cursor_record(moved, now=now, writer=writer)


__all__ = ["reconcile"]
