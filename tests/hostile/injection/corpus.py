"""The prompt-injection corpus (`corpus.yaml`) and the GitHub events that deliver each case.

`cases()` reads the corpus; `events(case)` makes the webhook deliveries of a case from GitHub's
own example payloads (tests/fixtures) with the hostile text put where its channel says (a
comment's body, an issue's title or body, a review, a review comment, a pull request's body or
head branch), normalized as the gateway does. A case written in several edits is delivered as
the first text created, then each later text as an edit. Reused by every replay of the corpus:
the policy decider, the agent, and (after merging) the agent decider.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from holon.gateway.commands import parse_command
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from tests.gateway.conftest import example

CORPUS = Path(__file__).with_name("corpus.yaml")
Channel = Literal[
    "comment", "issue_body", "issue_title", "review", "review_comment", "pr_body", "branch"
]
CHANNELS: tuple[Channel, ...] = (
    "comment",
    "issue_body",
    "issue_title",
    "review",
    "review_comment",
    "pr_body",
    "branch",
)
TRIES = frozenset(
    {"merge", "leak", "command", "workflow", "ignore", "hidden", "split", "mention", "link"}
)
# Associations that prove write access on their own; MEMBER and COLLABORATOR are looked up
# (`FACTS_PERMISSIONS` gives the replays' answers), the rest have none.
WRITE_ASSOCIATIONS = frozenset({"OWNER"})
# What the replays' facts say of the example payloads' actors, by association: a collaborator
# with write access, an org member without it.
PERMISSION_BY_ASSOCIATION = {"COLLABORATOR": "write", "MEMBER": "read"}
ISSUE = 1
PULL = 2
ACTOR = "Codertocat"  # the example payloads' sender
COMMAND_CHANNELS = frozenset({"comment", "review", "review_comment"})
PLAIN = {"branch": "fix/typo", "issue_title": "Crash on start"}


@dataclass(frozen=True)
class Case:
    id: str
    channel: Channel
    edits: tuple[str, ...]  # the text as first written, then as each edit left it
    tries: frozenset[str]
    author_association: str

    @property
    def text(self) -> str:
        """The text as it stands last."""
        return self.edits[-1]

    @property
    def has_write(self) -> bool:
        """Whether the case's author can write to the repository in the replays."""
        association = self.author_association
        return (
            association in WRITE_ASSOCIATIONS
            or PERMISSION_BY_ASSOCIATION.get(association) == "write"
        )


def permissions(case: Case, repo: str) -> dict[tuple[str, str], Any]:
    """`StaticFacts.permissions` for `case`'s actor: what the replays' GitHub says of them."""
    permission = PERMISSION_BY_ASSOCIATION.get(case.author_association)
    return {(repo, ACTOR): permission} if permission else {}


def twin(case: Case) -> Case:
    """`case`'s clean twin, the oracle of every decider replay: the same deliveries with each
    text reduced to what a policy may act on, its command line (else plain words). A hostile
    text must get no more than its twin does."""
    return replace(case, edits=tuple(_twin_text(case, t) for t in case.edits))


def _twin_text(case: Case, text: str) -> str:
    if case.channel in COMMAND_CHANNELS:
        command = parse_command(text)
        if command is not None:
            return f"/holon {command.word} {command.args}".rstrip()
    return PLAIN.get(case.channel, "The app crashes on start.")


def _case(raw: dict[str, Any]) -> Case:
    edits = raw.get("edits") or [raw["text"]]
    if not all(isinstance(t, str) and t for t in edits):
        raise ValueError(f"case {raw.get('id')}: text and edits are non-empty strings")
    tries = frozenset(raw["tries"])
    if not tries or not tries <= TRIES:
        raise ValueError(f"case {raw['id']}: tries {sorted(tries - TRIES)} unknown")
    if raw["channel"] not in CHANNELS:
        raise ValueError(f"case {raw['id']}: channel {raw['channel']!r} unknown")
    return Case(
        id=str(raw["id"]),
        channel=raw["channel"],
        edits=tuple(edits),
        tries=tries,
        author_association=str(raw["author_association"]),
    )


@cache
def cases() -> list[Case]:
    """Every case of the corpus, in its order; ValueError for a malformed one."""
    data = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    found = [_case(raw) for raw in data["cases"]]
    ids = [c.id for c in found]
    if len(set(ids)) != len(ids):
        raise ValueError("case ids must be unique")
    return found


def _comment(text: str, association: str, action: str, index: int) -> tuple[str, dict[str, Any]]:
    payload = example("issue_comment", action)
    payload["issue"]["number"] = ISSUE
    payload["comment"].update(id=1000, body=text, author_association=association)
    return "issue_comment", payload


def _issue(case: Case, text: str, action: str) -> tuple[str, dict[str, Any]]:
    payload = example("issues", action)
    issue = payload["issue"]
    issue.update(number=ISSUE, author_association=case.author_association)
    issue.pop("pull_request", None)
    if case.channel == "issue_title":
        issue["title"] = text
    else:
        issue["body"] = text
    return "issues", payload


def _pull(case: Case, text: str, action: str) -> tuple[str, dict[str, Any]]:
    payload = example("pull_request", action)
    pull = payload["pull_request"]
    pull.update(number=PULL, author_association=case.author_association)
    if case.channel == "branch":
        pull["head"]["ref"] = text
    else:
        pull["body"] = text
    return "pull_request", payload


def _review(case: Case, text: str) -> tuple[str, dict[str, Any]]:
    payload = example("pull_request_review", "submitted")
    payload["pull_request"]["number"] = PULL
    payload["review"].update(body=text, author_association=case.author_association)
    return "pull_request_review", payload


def _review_comment(case: Case, text: str, action: str) -> tuple[str, dict[str, Any]]:
    payload = example("pull_request_review_comment", action)
    payload["pull_request"]["number"] = PULL
    payload["comment"].update(body=text, author_association=case.author_association)
    return "pull_request_review_comment", payload


def deliveries(case: Case) -> Iterator[tuple[str, dict[str, Any]]]:
    """(GitHub event name, payload) of each delivery of `case`, in order."""
    for index, text in enumerate(case.edits):
        first = index == 0
        if case.channel == "comment":
            yield _comment(text, case.author_association, "created" if first else "edited", index)
        elif case.channel in ("issue_body", "issue_title"):
            yield _issue(case, text, "opened" if first else "edited")
        elif case.channel in ("pr_body", "branch"):
            yield _pull(case, text, "opened" if first else "edited")
        elif case.channel == "review":
            yield _review(case, text)
        else:
            yield _review_comment(case, text, "created" if first else "edited")


def events(case: Case, received_at: datetime | None = None) -> list[EventEnvelope]:
    """The gateway's envelopes of `case`'s deliveries."""
    at = received_at or datetime.now(UTC)
    return [
        normalize(name, payload, via="replay", received_at=at) for name, payload in deliveries(case)
    ]


__all__ = ["CHANNELS", "TRIES", "Case", "cases", "deliveries", "events", "permissions", "twin"]
