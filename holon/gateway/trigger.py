"""The triggering text, frozen at intake: what asked for the work, as it read then.

An authorized `/holon solve` can be edited after it triggered a run (by its author, or by
anyone who can edit it), and a hostile comment can be read into a run and deleted before anyone
sees it. So the text an event carried is recorded when the event is taken in (`TriggerSnapshot`:
which comment, review, issue or pull request, its author, when GitHub last updated it, and the
SHA-256 of its exact text), the agent is given that text only (`github/context.py`), and before
any write of the work the live item is read again and compared (`github/trigger_check.py`): an
edited or deleted trigger stops the write (`controller/frozen.py`).

Pure: the payload in, the snapshot out; comparing a snapshot with what GitHub answers later.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from holon.gateway.envelope import EventEnvelope, is_internal

SnapshotKind = Literal["comment", "issue", "pull_request", "review", "review_comment"]
# What the snapshot keeps of the text (the hash is always of the whole text): it rides on every
# intent record of the work, so the state stays small; the agent's context takes the text from
# the event itself, whole.
BODY_CHARS = 16_384
TITLE_CHARS = 1_024
_SHORT = 300  # a login, a time, a URL, a command line

# GitHub's event -> (kind, the payload's key of the object whose text is the trigger).
_OBJECTS: dict[str, tuple[SnapshotKind, str]] = {
    "issue_comment": ("comment", "comment"),
    "pull_request_review": ("review", "review"),
    "pull_request_review_comment": ("review_comment", "comment"),
    "issues": ("issue", "issue"),
    "pull_request": ("pull_request", "pull_request"),
    "pull_request_target": ("pull_request", "pull_request"),
}


class TriggerSnapshot(BaseModel):
    """The comment, review, issue or pull request an event was about, as the event carried it."""

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    kind: SnapshotKind
    id: int = Field(gt=0, description="The comment's or review's id; an issue's or PR's number.")
    number: int | None = Field(
        default=None, gt=0, description="The issue or pull request the comment or review is on."
    )
    url: str | None = Field(default=None, max_length=_SHORT, description="html_url")
    author: str | None = Field(default=None, max_length=_SHORT)
    updated_at: str | None = Field(
        default=None, max_length=_SHORT, description="GitHub's updated_at (a review's submitted_at)"
    )
    command: str | None = Field(
        default=None, max_length=_SHORT, description="The Holon command it gave: `/holon solve`"
    )
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="text_digest(title, body)")
    title: str | None = Field(default=None, max_length=TITLE_CHARS + 100)
    body: str = Field(default="", max_length=BODY_CHARS + 100)
    truncated: bool = Field(default=False, description="title or body kept cut to its bound")

    def named(self) -> str:
        """How a line names it: `the /holon solve comment by alice`, `issue #3 by bob`."""
        by = f" by {self.author}" if self.author else ""
        if self.kind in ("issue", "pull_request"):
            what = "pull request" if self.kind == "pull_request" else "issue"
            return f"the text of {what} #{self.id}{by}"
        noun = {"comment": "comment", "review": "review", "review_comment": "review comment"}
        command = f"{self.command} " if self.command else ""
        return f"the {command}{noun[self.kind]}{by}"


Change = Literal["edited", "deleted"]


@dataclass(frozen=True)
class TriggerVerdict:
    """What reading the trigger again found: unchanged (`change` None, no `error`), `edited`
    or `deleted`; `error` when it could not be read (nothing is known)."""

    change: Change | None = None
    live_updated_at: str | None = None
    error: str | None = None


class TriggerCheck(Protocol):
    """Reads the trigger of `snapshot` in `repo` again (the GitHub edge's `LiveTriggerCheck`)."""

    def __call__(self, repo: str | None, snapshot: TriggerSnapshot) -> TriggerVerdict: ...


def text_digest(title: str | None, body: str | None) -> str:
    """SHA-256 of the exact text: a comment's body, or an issue's title and body. Canonical
    JSON, so moving text between title and body changes it too; a null body is an empty one."""
    canonical = json.dumps([title, body or ""], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _str(value: Any, limit: int = _SHORT) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def snapshot_of(
    event: str, payload: dict[str, Any], command: str | None = None
) -> TriggerSnapshot | None:
    """The snapshot of GitHub event `event` (`issue_comment`, no action) with `payload`: the
    comment for issue_comment and review events, the issue or pull request itself for theirs;
    None for any other event, or a payload without the object."""
    found = _OBJECTS.get(event)
    if found is None:
        return None
    kind, key = found
    data = _obj(payload.get(key))
    title: str | None = None
    if kind in ("issue", "pull_request"):
        ident = _int(data.get("number"))
        number = ident
        raw_title = data.get("title")
        title = raw_title if isinstance(raw_title, str) else ""
    else:
        ident = _int(data.get("id"))
        parent = _obj(payload.get("issue")) or _obj(payload.get("pull_request"))
        number = _int(parent.get("number"))
    if ident is None:
        return None
    raw_body = data.get("body")
    body = raw_body if isinstance(raw_body, str) else ""
    kept_title = title[:TITLE_CHARS] if title is not None else None
    return TriggerSnapshot(
        kind=kind,
        id=ident,
        number=number,
        url=_str(data.get("html_url")),
        author=_str(_obj(data.get("user")).get("login")),
        updated_at=_str(data.get("updated_at")) or _str(data.get("submitted_at")),
        command=_str(command),
        sha256=text_digest(title, body),
        title=kept_title,
        body=body[:BODY_CHARS],
        truncated=len(body) > BODY_CHARS or (title is not None and len(title) > TITLE_CHARS),
    )


def snapshot_of_envelope(
    env: EventEnvelope, mention: str | None = "holon"
) -> TriggerSnapshot | None:
    """The snapshot of a GitHub event's envelope (None for Holon's own events, timers, and
    events that carry no such text), naming the command it gave (`/holon solve`)."""
    if is_internal(env) or env.source != "github":
        return None
    parts = env.type.split(".")
    if len(parts) < 2:
        return None
    command = None
    if env.command is not None:
        word = f" {env.command.word}" if env.command.word else ""
        name = mention or "holon"
        command = f"/{name}{word}" if env.command.via == "slash" else f"@{name}{word}"
    return snapshot_of(parts[1], env.payload, command)


def snapshot_from(data: Any) -> TriggerSnapshot | None:
    """A snapshot recorded in the state (intent data); None when absent or unreadable (restored
    state is not trusted: an unreadable one is not made up)."""
    if not isinstance(data, dict):
        return None
    try:
        return TriggerSnapshot.model_validate(data)
    except ValueError:
        return None


def compare(snapshot: TriggerSnapshot, title: str | None, body: str | None) -> Change | None:
    """None when the live text is the snapshot's; `edited` when it differs."""
    live_title = (title or "") if snapshot.kind in ("issue", "pull_request") else None
    return None if text_digest(live_title, body) == snapshot.sha256 else "edited"


def refusal(snapshot: TriggerSnapshot, change: Change, live_updated_at: str | None = None) -> str:
    """One line: why the write was not done, and how to continue."""
    if change == "deleted":
        what = f"{snapshot.named()} was deleted after it triggered this run"
    else:
        at = f" (at {live_updated_at})" if live_updated_at else ""
        what = f"{snapshot.named()} was edited after it triggered this run{at}"
    how = "re-issue the command to continue" if snapshot.command else "ask again to continue"
    if snapshot.kind in ("issue", "pull_request"):
        how = "comment a Holon command (`/holon solve`, `/holon fix`) to continue"
    return f"{what}; nothing was written: {how}"


__all__ = [
    "BODY_CHARS",
    "Change",
    "SnapshotKind",
    "TriggerCheck",
    "TriggerSnapshot",
    "TriggerVerdict",
    "compare",
    "refusal",
    "snapshot_from",
    "snapshot_of",
    "snapshot_of_envelope",
    "text_digest",
]
