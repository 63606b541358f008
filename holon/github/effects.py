"""What every GitHub effect shares: where it lands (`Subject`), the scope it runs in (`Scope`:
the repository handle, the event's repository, Holon's login, the workflow), what it answers
(`EffectOutcome`) and how it refuses (`EffectRefused`, `CrossRepository`).

An effect refuses before any call to GitHub when the request is not one Holon performs: a
target in another repository than the event's, a label name GitHub would not take, a login
that is not one. A refusal is an `InvalidInput` (the input must change, trying again will not
help) with one line, `reason`, that the executor journals; a failed call is an
`errors.GitHubError`. Effects are idempotent: each reads the state first and writes only what
is missing, so a re-run, a retry or a redelivery performs nothing twice (`performed` is False
for such a no-op, and `note` says why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from holon.errors import InvalidInput
from holon.github.handle import Repo
from holon.github.known import Known
from holon.github.neutralize import DEFAULT_RULES, OutputRules
from holon.terminal import line

SubjectKind = Literal["issue", "pull_request"]
# A GitHub login (letters, digits, single hyphens, at most 39); `[bot]` for an app's.
LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}(?:\[bot\])?")
REASON_LIMIT = 200


class EffectRefused(InvalidInput):
    """Holon will not perform this effect; `reason` is the one line to journal."""

    def __init__(self, effect: str, reason: str) -> None:
        self.effect = effect
        self.reason = line(reason, limit=REASON_LIMIT)
        super().__init__(f"refused {effect}: {self.reason}")


class CrossRepository(EffectRefused):
    """The target is in another repository than the event's."""


@dataclass(frozen=True)
class Subject:
    """An issue or a pull request (comments and labels on a PR go through its issue number)."""

    repo: str  # owner/name
    kind: SubjectKind
    number: int

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.number}"


def _same(a: str, b: str) -> bool:
    return a.casefold() == b.casefold()  # GitHub's owner and repository names ignore case


@dataclass(frozen=True)
class Scope:
    """Where effects run: `repo` is the handle on the event's repository, `login` Holon's own
    (whose markers count; None when unknown), `workflow` the marker's workflow, `known` the
    ids of Holon's own items written or found through this scope (`known.py`), `rules` what
    its bodies may keep (`neutralize.py`: links only to the allow-listed domains)."""

    repo: Repo
    event_repo: str
    login: str | None
    workflow: str = "holon"
    known: Known = field(default_factory=Known, compare=False, repr=False)
    rules: OutputRules = field(default=DEFAULT_RULES, compare=False)

    def check(self, effect: str, target_repo: str | None) -> None:
        """Refuse a target outside the event's repository, or a handle opened on another."""
        if target_repo is None or not _same(target_repo, self.event_repo):
            where = target_repo or "no repository"
            raise CrossRepository(
                effect, f"the target is in {where}, not in the event's {self.event_repo}"
            )
        if not _same(self.repo.full_name, self.event_repo):
            raise CrossRepository(
                effect, f"the handle is on {self.repo.full_name}, not on {self.event_repo}"
            )

    def own_login(self, effect: str) -> str:
        """Holon's login, which finding its own items needs; a refusal when it is unknown."""
        if self.login is None:
            raise EffectRefused(
                effect,
                "Holon's login is unknown, so its own items cannot be found again: "
                "set HOLON_GITHUB_LOGIN",
            )
        return self.login


def subject_from(effect: str, repo: str | None, kind: str, id: str) -> Subject:
    """The `Subject` an intent's target names (`issue`/`pull_request` and a number); a refusal
    for any other target (a repository, a malformed number)."""
    if kind not in ("issue", "pull_request"):
        raise EffectRefused(effect, f"the target is a {kind}, not an issue or a pull request")
    if not id.isascii() or not id.isdigit() or len(id) > 10 or int(id) < 1:
        raise EffectRefused(effect, f"{id!r} is not an issue or pull request number")
    if repo is None:
        raise CrossRepository(effect, "the target names no repository")
    return Subject(repo, "issue" if kind == "issue" else "pull_request", int(id))


def subject_for(scope: Scope, effect: str, subject: Subject) -> Subject:
    """`subject` once it is known to be in the event's repository."""
    scope.check(effect, subject.repo)
    if subject.number < 1:
        raise EffectRefused(effect, f"{subject.kind} number {subject.number} is not one")
    return subject
