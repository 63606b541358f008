"""The GitHub connector: one webhook-shaped payload in, one EventEnvelope out (pure).

Every payload shape an event can arrive in becomes one generic envelope here, so nothing
downstream reads GitHub's raw structure. The events Holon acts on are modelled precisely (the
table in docs/events.md): their dedupe key is built from exactly the identity fields of the
table, so a redelivery or a second path gives the same key, while a re-added label, a re-run
check suite or a new push give new ones. Only the fields used are read, so older GitHub
Enterprise payloads normalize too. Every other event normalizes generically.
"""

from __future__ import annotations

import hashlib
import json
import marshal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from holon.errors import InvalidInput
from holon.gateway.commands import Command, parse_command
from holon.gateway.continuation import dispatch_subject
from holon.gateway.envelope import (
    Actor,
    Authority,
    EventEnvelope,
    Scope,
    Subject,
    Via,
    envelope_id,
)


class PayloadError(InvalidInput):
    """The payload lacks what its event needs, or disagrees with the event name."""


_OWNER = {"OWNER"}
_NONE = {"NONE", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "CONTRIBUTOR", "MANNEQUIN"}


def authority_of(association: str | None) -> Authority:
    """`owner` for OWNER, `none` for outsiders; MEMBER/COLLABORATOR (and unknown) must be looked
    up by the controller, since membership does not prove write access."""
    if association in _OWNER:
        return "owner"
    if association in _NONE:
        return "none"
    return "unknown"


# The dotted paths rows read, split once: they are a fixed set written in this module.
_PARTS: dict[str, tuple[str, ...]] = {}


class _Payload:
    """Typed access to the fields a row reads; a missing one is a one-line PayloadError."""

    def __init__(self, event: str, data: dict[str, Any]) -> None:
        self.event = event
        self.data = data

    def _walk(self, path: str) -> Any:
        parts = _PARTS.get(path)
        if parts is None:
            parts = _PARTS[path] = tuple(path.split("."))
        value: Any = self.data
        for part in parts:
            if not isinstance(value, dict):
                return None
            # A missing key and a null both end the walk in None, as a null has no fields.
            value = value.get(part)
        return value

    def obj(self, path: str) -> dict[str, Any]:
        value = self._walk(path)
        if not isinstance(value, dict):
            raise PayloadError(f"{self.event} payload has no `{path}` object")
        return value

    def text(self, path: str) -> str:
        value = self._walk(path)
        if value is not None and not isinstance(value, str):
            raise PayloadError(f"{self.event} payload `{path}` is not a string")
        if not value:
            raise PayloadError(f"{self.event} payload has no `{path}`")
        return value

    def number(self, path: str) -> int:
        value = self._walk(path)
        if not isinstance(value, int) or isinstance(value, bool):
            raise PayloadError(f"{self.event} payload has no numeric `{path}`")
        return value

    def optional(self, path: str) -> Any:
        return self._walk(path)

    def time(self, path: str) -> datetime | None:
        return self.time_of(self._walk(path), path)

    def time_of(self, value: Any, path: str) -> datetime | None:
        try:
            return parse_time(value)
        except ValueError as exc:
            raise PayloadError(f"{self.event} payload `{path}`: {exc}") from None


# GitHub's timestamps lie well inside these; outside, date arithmetic downstream could overflow.
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(3000, 1, 1, tzinfo=UTC)


def parse_time(value: Any) -> datetime | None:
    """GitHub timestamps: ISO 8601 strings, or epoch seconds (push's `pushed_at`); None if there
    is none. ValueError for a time outside 1970..3000 (`10**20` epoch seconds), or a string that
    is no ISO 8601 time (`99999-01-01T00:00:00Z`): never silently the time it was received."""
    parsed: datetime | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        if not _EARLIEST.timestamp() <= value < _LATEST.timestamp():
            raise ValueError(f"timestamp {str(value)[:30]} is out of range")
        parsed = datetime.fromtimestamp(value, UTC)
    elif isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"timestamp {value[:40]!r} is not an ISO 8601 time between 1970 and 3000"
            ) from None
        if not parsed.tzinfo:
            parsed = parsed.replace(tzinfo=UTC)
        # The naive check first: comparing across offsets can itself overflow near year 1 or 9999.
        naive = parsed.replace(tzinfo=None)
        if not datetime(1969, 12, 30) <= naive <= datetime(3000, 1, 2) or not (
            _EARLIEST <= parsed < _LATEST
        ):
            raise ValueError(f"timestamp {value[:40]!r} is out of range")
    return parsed


@dataclass(frozen=True)
class _Row:
    """What a precise row extracts: the subject, the identity fields, when it happened."""

    subject: Subject
    identity: tuple[str, ...]
    at: datetime | None
    authored: str | None = None  # the payload object authored by the sender, for association
    command_body: str | None = None


def _issue_subject(p: _Payload) -> Subject:
    return _subject(kind="issue", id=str(p.number("issue.number")))


def _issues(p: _Payload, action: str) -> _Row:
    at = p.time("issue.updated_at")  # first: a time out of range is named as that
    updated = p.text("issue.updated_at")
    return _Row(
        _issue_subject(p),
        (str(p.number("issue.number")), action, updated),
        at,
        authored="issue" if action == "opened" else None,
    )


def _issues_label(p: _Payload, action: str) -> _Row:
    at = p.time("issue.updated_at")
    updated = p.text("issue.updated_at")
    # GitHub's schema lets `label` be absent here (a label deleted meanwhile): key on "" then.
    label = p.optional("label.name")
    return _Row(
        _issue_subject(p),
        (str(p.number("issue.number")), action, label if isinstance(label, str) else "", updated),
        at,
    )


def _issue_comment(p: _Payload, action: str) -> _Row:
    # A comment on a pull request arrives as an issue comment; its subject is the PR.
    kind = "pull_request" if isinstance(p.optional("issue.pull_request"), dict) else "issue"
    return _Row(
        _subject(kind=kind, id=str(p.number("issue.number"))),
        (str(p.number("comment.id")),),
        p.time("comment.created_at"),
        authored="comment",
        command_body=p.optional("comment.body"),
    )


def _pr_subject(p: _Payload) -> Subject:
    return _subject(
        kind="pull_request",
        id=str(p.number("pull_request.number")),
        head_sha=p.text("pull_request.head.sha"),
    )


def _pull_request(p: _Payload, action: str) -> _Row:
    subject = _pr_subject(p)
    return _Row(
        subject,
        (subject.id, action, subject.head_sha or ""),
        p.time("pull_request.updated_at"),
        authored="pull_request" if action == "opened" else None,
    )


def _pull_request_synchronize(p: _Payload, action: str) -> _Row:
    subject = _pr_subject(p)
    # `after` is the pushed sha; older payloads without it carry the same sha as the head.
    after = p.optional("after")
    sha = after if isinstance(after, str) and after else subject.head_sha or ""
    return _Row(subject, (subject.id, sha), p.time("pull_request.updated_at"))


def _pull_request_label(p: _Payload, action: str) -> _Row:
    subject = _pr_subject(p)
    at = p.time("pull_request.updated_at")
    updated = p.text("pull_request.updated_at")
    return _Row(subject, (subject.id, action, p.text("label.name"), updated), at)


def _review(p: _Payload, action: str) -> _Row:
    return _Row(
        _pr_subject(p),
        (str(p.number("review.id")),),
        p.time("review.submitted_at"),
        authored="review",
        command_body=p.optional("review.body"),
    )


def _review_comment(p: _Payload, action: str) -> _Row:
    return _Row(
        _pr_subject(p),
        (str(p.number("comment.id")),),
        p.time("comment.created_at"),
        authored="comment",
        command_body=p.optional("comment.body"),
    )


def _check(kind: str) -> Callable[[_Payload, str], _Row]:
    def row(p: _Payload, action: str) -> _Row:
        check = p.obj(kind)
        prs = check.get("pull_requests")
        numbers = sorted(
            pr["number"]
            for pr in (prs if isinstance(prs, list) else [])
            if isinstance(pr, dict) and isinstance(pr.get("number"), int)
        )
        head = p.text(f"{kind}.head_sha")
        conclusion = p.optional(f"{kind}.conclusion")
        updated_field = "updated_at" if kind == "check_suite" else "completed_at"
        updated = p.optional(f"{kind}.{updated_field}") or p.optional(f"{kind}.started_at") or ""
        ident = str(p.number(f"{kind}.id"))
        return _Row(
            _subject(kind=kind, id=ident, head_sha=head, pull_requests=numbers),
            (ident, head, str(conclusion or ""), str(updated)),
            p.time_of(updated, f"{kind}.{updated_field}"),
        )

    return row


def _workflow_run(p: _Payload, action: str) -> _Row:
    ident = str(p.number("workflow_run.id"))
    attempt = p.optional("workflow_run.run_attempt")
    return _Row(
        _subject(kind="workflow_run", id=ident, head_sha=p.optional("workflow_run.head_sha")),
        (
            ident,
            str(attempt if isinstance(attempt, int) else 1),
            str(p.optional("workflow_run.conclusion") or ""),
        ),
        p.time("workflow_run.updated_at"),
    )


def _push(p: _Payload, action: str) -> _Row:
    ref = p.text("ref")
    after = p.text("after")
    at = p.time("head_commit.timestamp") or p.time("repository.pushed_at")
    return _Row(_subject(kind="ref", id=ref, head_sha=after), (ref, after), at)


Extractor = Callable[[_Payload, str], _Row]

# (event, action or None for every action) -> extractor. docs/events.md holds the same table.
PRECISE: dict[tuple[str, str | None], Extractor] = {
    ("issues", "opened"): _issues,
    ("issues", "reopened"): _issues,
    ("issues", "closed"): _issues,
    ("issues", "edited"): _issues,
    ("issues", "labeled"): _issues_label,
    ("issues", "unlabeled"): _issues_label,
    ("issue_comment", "created"): _issue_comment,
    ("pull_request", "opened"): _pull_request,
    ("pull_request", "reopened"): _pull_request,
    ("pull_request", "ready_for_review"): _pull_request,
    ("pull_request", "closed"): _pull_request,
    ("pull_request", "synchronize"): _pull_request_synchronize,
    ("pull_request", "labeled"): _pull_request_label,
    ("pull_request", "unlabeled"): _pull_request_label,
    ("pull_request_review", "submitted"): _review,
    ("pull_request_review_comment", "created"): _review_comment,
    ("check_suite", "completed"): _check("check_suite"),
    ("check_run", "completed"): _check("check_run"),
    ("workflow_run", "completed"): _workflow_run,
    ("push", None): _push,
}
# Events keyed by how they arrived: the Actions run id, else the webhook delivery id.
DISPATCH_EVENTS = ("repository_dispatch", "workflow_dispatch", "schedule")

# The top-level shape of each event Holon routes: the objects its payload must hold and every
# event-specific key it may hold (besides action, repository, sender, installation, organization).
# Written by hand from GitHub's webhook schema; tests/gateway/test_event_shape.py checks this table
# against tests/fixtures/octokit-webhooks/schema.json.
_SHAPES: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "issues": (("issue",), frozenset({"issue", "changes", "assignee", "label", "milestone"})),
    "issue_comment": (("issue", "comment"), frozenset({"issue", "comment", "changes"})),
    "pull_request": (
        ("pull_request",),
        frozenset(
            {
                "pull_request",
                "number",
                "changes",
                "assignee",
                "label",
                "milestone",
                "reason",
                "before",
                "after",
                "requested_reviewer",
                "requested_team",
            }
        ),
    ),
    "pull_request_review": (
        ("pull_request", "review"),
        frozenset({"pull_request", "review", "changes"}),
    ),
    "pull_request_review_comment": (
        ("pull_request", "comment"),
        frozenset({"pull_request", "comment", "changes"}),
    ),
    "check_suite": (("check_suite",), frozenset({"check_suite"})),
    "check_run": (("check_run",), frozenset({"check_run", "requested_action"})),
    "workflow_run": (("workflow_run",), frozenset({"workflow_run", "workflow"})),
}
# A key one of these events requires names what the payload is about: present in a payload of an
# event that never holds it, the event name and the payload disagree.
_IDENTIFYING = frozenset(key for objects, _ in _SHAPES.values() for key in objects)


def check_shape(event: str, payload: dict[str, Any]) -> None:
    """PayloadError if `payload` is not shaped like a payload of `event` (for routed events)."""
    shape = _SHAPES.get(event)
    if shape is None:
        return
    objects, keys = shape
    for needed in objects:
        if not isinstance(payload.get(needed), dict):
            present = sorted(k for k in _IDENTIFYING - keys if isinstance(payload.get(k), dict))
            hint = f" (it has `{present[0]}`)" if present else ""
            raise PayloadError(
                f"event {event} disagrees with its payload: no `{needed}` object{hint}"
            )
    foreign = sorted(_IDENTIFYING.intersection(payload).difference(keys))
    if foreign:
        raise PayloadError(
            f"event {event} disagrees with its payload: it has `{foreign[0]}`, "
            f"which {event} payloads never hold"
        )


# What json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False) uses, made
# once: the digests of deployed dedupe keys depend on this exact text (tests pin it).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(payload: dict[str, Any]) -> str:
    """The first 32 hex digits of the sha256 of `payload`'s canonical JSON text (`_CANONICAL`)
    in UTF-8: the identity of every event without a precise one. Deployed dedupe keys hold these
    digests, so the text must never change (tests pin it); only how it is produced may."""
    return hashlib.sha256(canonical_text(payload).encode("utf-8")).hexdigest()[:32]


# The same repository, organization, installation and users come in event after event, each
# object a large part of a payload's canonical text (half of it for the repository alone). Their
# texts are kept, looked up by the object's exact content (its `marshal` bytes: they load back to
# the very object, types included, so `1`, `1.0` and `true` are three keys as they are three
# texts), and spliced into the text of the rest: the same text, each object encoded once.
# Format 2 writes no back-references, so equal objects parsed from different payloads (their
# strings shared differently) have equal bytes.
_CONTEXT = frozenset({"repository", "organization", "installation", "enterprise", "sender"})
_DEPTH = 2  # how far below the top entities are looked for (pull_request.head.repo)
_ENTITY_BUDGET = 8 * 1024 * 1024  # bytes of keys and texts kept; all are forgotten past it
_ENTITY_MAX = 64 * 1024  # a larger object is encoded each time, never kept
_entity_texts: dict[bytes, str] = {}
_entity_bytes = 0
# A kept object's place in the rest's text: a string that JSON text holds only escaped (it starts
# with NUL, written `\u0000`), numbered in the order it was put there.
_MARK = "\x00holon-entity-"
_MARK_TEXT = '"\\u0000holon-entity-'
_MARK_END = '\\u0000"'


def forget_kept_texts() -> None:
    """Drop every kept text (the benchmark's cold figure; tests)."""
    global _entity_bytes
    _entity_texts.clear()
    _entity_bytes = 0


def _is_entity(value: dict[str, Any]) -> bool:
    """A user, organization or repository: what GitHub repeats across events."""
    return "id" in value and ("login" in value or "full_name" in value)


def _entity_text(value: dict[str, Any]) -> str | None:
    try:
        mark = marshal.dumps(value, 2)
    except ValueError:  # not plain data (a caller's own object): encoded with the rest
        return None
    text = _entity_texts.get(mark)
    if text is None:
        global _entity_bytes
        text = _CANONICAL.encode(value)
        size = len(mark) + len(text)
        if size <= _ENTITY_MAX:
            if _entity_bytes + size > _ENTITY_BUDGET:
                forget_kept_texts()
            _entity_texts[mark] = text
            _entity_bytes += size
    return text


def _shell(obj: dict[str, Any], texts: list[str], depth: int, top: bool) -> dict[str, Any]:
    """`obj` with its entities (and at the top, its context objects) replaced by numbered marks,
    their texts appended to `texts`; dicts `depth` levels down are searched too. A dict is
    copied only when something in it is replaced."""
    shell: dict[str, Any] | None = None
    for key, value in obj.items():
        if type(value) is not dict:
            continue
        replacement: Any
        if (top and key in _CONTEXT) or _is_entity(value):
            text = _entity_text(value)
            if text is None:
                continue
            replacement = f"{_MARK}{len(texts)}\x00"
            texts.append(text)
        elif depth > 0:
            replacement = _shell(value, texts, depth - 1, False)
            if replacement is value:
                continue
        else:
            continue
        if shell is None:
            shell = dict(obj)
        shell[key] = replacement
    return obj if shell is None else shell


def canonical_text(payload: dict[str, Any]) -> str:
    """`json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`."""
    texts: list[str] = []
    shell = _shell(payload, texts, _DEPTH, True)
    text = _CANONICAL.encode(shell)
    if not texts:
        return text
    pieces = text.split(_MARK_TEXT)
    if len(pieces) != len(texts) + 1:
        # The payload itself holds a string that reads as a mark: encoded whole instead.
        return _CANONICAL.encode(payload)
    # The marks come in the text's (sorted) order: each number must come exactly once.
    unplaced = {str(number): entity for number, entity in enumerate(texts)}
    out = [pieces[0]]
    for piece in pieces[1:]:
        number, end, rest = piece.partition(_MARK_END)
        entity = unplaced.pop(number, None) if end else None
        if entity is None:
            return _CANONICAL.encode(payload)
        out.append(entity)
        out.append(rest)
    return "".join(out)


# Frozen, so one instance serves every event with the same values: the listener sees few
# repositories and senders, and each envelope then holds fewer objects for the collector to walk.
_SHARED_MAX = 4096
_scopes: dict[str | None, Scope] = {}
_actors: dict[tuple[str, str, str | None], Actor] = {}


_subjects: dict[tuple[str, str, str | None, tuple[int, ...]], Subject] = {}


def _subject(
    *, kind: str, id: str, head_sha: str | None = None, pull_requests: list[int] | None = None
) -> Subject:
    """The shared Subject of these values (frozen, never changed; the list too is only read)."""
    if head_sha is not None and type(head_sha) is not str:
        # Not a string: validation refuses it as it always did (and it may not be hashable).
        return Subject(kind=kind, id=id, head_sha=head_sha, pull_requests=pull_requests or [])
    numbers = tuple(pull_requests) if pull_requests else ()
    key = (kind, id, head_sha, numbers)
    subject = _subjects.get(key)
    if subject is None:
        if len(_subjects) >= _SHARED_MAX:
            _subjects.clear()
        subject = _subjects[key] = Subject(
            kind=kind, id=id, head_sha=head_sha, pull_requests=list(numbers)
        )
    return subject


def _scope(repo: str | None) -> Scope:
    scope = _scopes.get(repo)
    if scope is None:
        if len(_scopes) >= _SHARED_MAX:
            _scopes.clear()
        scope = _scopes[repo] = Scope(repo=repo)
    return scope


def _actor(p: _Payload, authored: str | None) -> Actor | None:
    data = p.data
    sender = data.get("sender")
    if not isinstance(sender, dict):
        return None
    login = sender.get("login")
    if not isinstance(login, str):
        return None
    kind = sender.get("type")
    if not isinstance(kind, str):
        kind = "User"
    association = None
    # author_association describes the author of an object, which is the actor only when the
    # sender wrote it (a label added to someone else's issue says nothing about the labeller).
    for name in (authored,) if authored else ("comment", "review", "issue", "pull_request"):
        obj = data.get(name)
        if not isinstance(obj, dict):
            continue
        user = obj.get("user")
        if isinstance(user, dict) and user.get("login") == login:
            value = obj.get("author_association")
            association = value if isinstance(value, str) else None
            break
    key = (login, kind, association)
    actor = _actors.get(key)
    if actor is None:
        if len(_actors) >= _SHARED_MAX:
            _actors.clear()
        actor = _actors[key] = Actor(
            login=login,
            type=kind,
            association=association,
            is_bot=kind == "Bot",
            authority=authority_of(association),
        )
    return actor


def _generic_subject(p: _Payload, repo: str | None) -> Subject | None:
    data = p.data
    for kind in ("pull_request", "issue"):
        obj = data.get(kind)
        if isinstance(obj, dict) and isinstance(obj.get("number"), int):
            is_pr = kind == "pull_request" or isinstance(obj.get("pull_request"), dict)
            return _subject(kind="pull_request" if is_pr else "issue", id=str(obj["number"]))
    for kind in ("check_suite", "check_run", "workflow_run"):
        obj = data.get(kind)
        if isinstance(obj, dict) and isinstance(obj.get("id"), int):
            return _subject(kind=kind, id=str(obj["id"]))
    ref = data.get("ref")
    if isinstance(ref, str) and ref:
        return _subject(kind="ref", id=ref)
    return _subject(kind="repository", id=repo) if repo else None


def normalize(
    event: str,
    payload: dict[str, Any],
    *,
    via: Via,
    received_at: datetime,
    delivery: str | None = None,
    run_id: str | None = None,
    repository: str | None = None,
    mention: str | None = "holon",
) -> EventEnvelope:
    """The envelope of one GitHub event. `received_at` is used only when the payload has no time."""
    if not event or not event.replace("_", "").isalnum():
        raise PayloadError(f"invalid event name {event!r}")
    p = _Payload(event, payload)
    action = payload.get("action")
    if not isinstance(action, str):
        action = None
    check_shape(event, payload)
    repo_name = p.optional("repository.full_name")
    repo = repo_name if isinstance(repo_name, str) and repo_name else repository
    org = p.optional("organization.login")
    owner = repo or (org if isinstance(org, str) else None) or "-"

    extractor = PRECISE.get((event, action)) or PRECISE.get((event, None))
    command: Command | None = None
    if event == "schedule":
        cron = payload.get("schedule")
        source, type_ = "timer", "timer.tick"
        ident = run_id or delivery or content_hash(payload)
        key = f"timer:{owner}:schedule:{cron or '-'}:{ident}"
        subject: Subject | None = _subject(kind="repository", id=repo) if repo else None
        at, actor = received_at, None
    elif extractor is not None:
        row = extractor(p, action or "")
        source, type_ = "github", f"github.{event}" + (f".{action}" if action else "")
        key = (
            f"github:{owner}:{event}"
            + (f".{action}" if action else "")
            + ":"
            + ":".join(row.identity)
        )
        subject, at = row.subject, row.at or received_at
        actor = _actor(p, row.authored)
        if row.command_body is not None and isinstance(row.command_body, str):
            command = parse_command(row.command_body, mention=mention)
    else:
        source, type_ = "github", f"github.{event}" + (f".{action}" if action else "")
        if event in DISPATCH_EVENTS:
            ident = run_id or delivery or content_hash(payload)
            # A dispatch asks something of the repository. workflow_dispatch's `ref` only says
            # which branch's workflow file runs (usually the default branch), as
            # repository_dispatch's `branch` does: a subject ref:<name> would file the request
            # with pushes to that branch.
            subject = _subject(kind="repository", id=repo) if repo else None
            # Holon's own re-activation names the subject it continues (gateway/continuation.py);
            # an input of any other shape leaves the dispatch on the repository.
            named = dispatch_subject(payload) if event == "workflow_dispatch" else None
            if named is not None:
                subject = _subject(kind=named[0], id=named[1])
        else:
            # Content, not delivery id: the same fact by any path (Actions has no delivery id).
            ident = content_hash(payload)
            subject = _generic_subject(p, repo)
        key = f"github:{owner}:{type_.removeprefix('github.')}:{ident}"
        at, actor = received_at, _actor(p, None)
    return EventEnvelope(
        id=envelope_id(key),
        source=source,
        type=type_,
        via=via,
        scope=_scope(repo),
        at=at,
        subject=subject,
        dedupe_key=key,
        delivery=delivery,
        actor=actor,
        command=command,
        payload=payload,
    )
