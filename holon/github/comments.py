"""One comment per (subject, workflow, skill), found again by its marker and edited in place.

`upsert_comment` lists the subject's comments, oldest first, one page at a time, and stops at
the first one written by Holon's own login whose marker is this comment's key; a marker in
anyone else's comment is ignored (anyone can type one). It then edits that comment, or posts a
new one when there is none, so a re-run, a retry or a redelivery edits instead of duplicating.
Calls: the pages read up to the comment (1 when it is on the first page of 100), plus one write,
or none when the comment already says exactly this. A comment this process already wrote or
found (`Scope.known`: a progress comment settled after its start) is edited directly, 1 call,
when the body changes; a 404 there (deleted meanwhile) falls back to the look-up.

A POST answered with a 5xx or not at all may have been done by GitHub: before anything is sent
again the comment is looked up by its marker, and an error is raised when it is not there, so
the caller's next attempt (which lists first) posts it. A comment is never posted twice.

Two processes may look at once (one event delivered to two jobs), both find none and both post.
So a new comment is followed by one more look-up: the oldest comment with the marker is the
one; when it is not ours, ours is deleted and the oldest edited to say this body. Every racer
converges on the same comment, whatever the order of their writes.

`reply` is the controller's own reply (usage, status, refusal): one per subject and kind, with
`reply.<kind>` in the marker's skill field, a name no skill can have (skills are `[a-z0-9-]`).
"""

from __future__ import annotations

import re

from holon.github.body import COMMENT_LIMIT, with_marker
from holon.github.effects import EffectRefused, Scope, Subject, subject_for
from holon.github.errors import ServerError
from holon.github.handle import CommentView
from holon.github.known import write_known
from holon.github.logins import same_login
from holon.github.marker import Marker, format_marker, parse_marker
from holon.github.outcome import EffectOutcome

EFFECT = "comment"
_KIND = re.compile(r"[a-z][a-z0-9_-]{0,31}")


def comment_marker(scope: Scope, effect: str, subject: Subject, skill: str | None) -> str:
    """The marker line of Holon's item for (`subject`, `scope.workflow`, `skill`); a refusal
    when a value is too long to be one."""
    try:
        return format_marker(subject.kind, str(subject.number), scope.workflow, skill)
    except ValueError as exc:
        raise EffectRefused(effect, f"cannot mark it: {exc}") from None


def find_own(scope: Scope, subject: Subject, key: Marker | None) -> CommentView | None:
    """The first comment on `subject` by Holon's login that carries marker `key`."""
    login = scope.own_login(EFFECT)
    for comment in scope.repo.comments(subject.number):
        if same_login(comment.author, login) and parse_marker(comment.body) == key:
            return comment
    return None


def _outcome(comment: CommentView, performed: bool, note: str = "") -> EffectOutcome:
    output = {"comment_id": comment.id, "url": comment.url}
    return EffectOutcome(EFFECT, performed, output, note)


def upsert_comment(
    scope: Scope, subject: Subject, body: str, *, skill: str | None = None
) -> EffectOutcome:
    """Write `body` as Holon's one comment for (`subject`, `scope.workflow`, `skill`)."""
    subject = subject_for(scope, EFFECT, subject)
    if not body.strip():
        raise EffectRefused(EFFECT, "the comment body is empty")
    marker = comment_marker(scope, EFFECT, subject, skill)
    key = parse_marker(marker)
    text = with_marker(marker, body, COMMENT_LIMIT, scope.rules)
    item = (EFFECT, subject.number, key)
    edited = write_known(
        scope.known, item, text, lambda ident: scope.repo.edit_comment(subject.number, ident, text)
    )
    if edited is not None:
        return _outcome(edited, True)
    found = find_own(scope, subject, key)
    if found is not None:
        performed = found.body != text
        if performed:
            found = scope.repo.edit_comment(subject.number, found.id, text)
        scope.known.remember(item, found.id, text)
        return _outcome(found, performed, "" if performed else "the comment already says this")
    try:
        posted = scope.repo.create_comment(subject.number, text)
    except ServerError as exc:
        # GitHub may have posted it: look before anyone posts again.
        there = find_own(scope, subject, key)
        if there is None:
            raise ServerError(
                f"{exc}; no comment with its marker was found, so a later attempt posts it",
                operation=exc.operation,
                status=exc.status,
            ) from None
        if there.body != text:  # a different body won a race: this one is the latest
            there = scope.repo.edit_comment(subject.number, there.id, text)
        scope.known.remember(item, there.id, text)
        return _outcome(there, True, "GitHub answered with an error but had posted it")
    posted = _oldest_wins(scope, subject, key, posted, text)
    scope.known.remember(item, posted.id, text)
    return _outcome(posted, True)


def _oldest_wins(
    scope: Scope, subject: Subject, key: Marker | None, posted: CommentView, text: str
) -> CommentView:
    """The one comment after posting `posted` (see the module docstring)."""
    first = find_own(scope, subject, key)
    if first is None or first.id == posted.id:  # None: a listing that lags; ours stands
        return posted
    scope.repo.delete_comment(posted.id)
    return first if first.body == text else scope.repo.edit_comment(subject.number, first.id, text)


def reply(scope: Scope, subject: Subject, kind: str, body: str) -> EffectOutcome:
    """The controller's reply of `kind` (usage, status, refusal) on `subject`, kept to one
    comment per subject and kind."""
    if not _KIND.fullmatch(kind):
        raise EffectRefused(EFFECT, "a reply's kind is a short lowercase word")
    return upsert_comment(scope, subject, body, skill=f"reply.{kind}")
