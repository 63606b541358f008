"""Guardrails applied to every decision, whoever decided (RFC-0004 Epic B.4, C.3).

Pure: the ledger of past work, the facts and the clock are passed in. Each refusal carries the
reason that is journaled. Unknown facts refuse rather than guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from holon.controller.facts import RepoFacts, at_least
from holon.controller.memory_update import repeat_refusal
from holon.controller.policy import Policy
from holon.gateway.continuation import continues
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent

# Skills that act on one head sha: running one twice for the same sha only repeats work.
PER_SHA_SKILLS = ("github-review", "github-pr-fix")


class Ledger(Protocol):
    def active_skill(self, subject: str, skill: str) -> bool: ...

    def ran_for_sha(self, subject: str, skill: str, sha: str) -> bool: ...

    def last_automatic_run(self, subject: str) -> datetime | None: ...

    # How many times `skill` failed on `sha` (None: the subject has no head) per the subject's
    # memory; 0 when it has none.
    def failed_attempts(self, subject: str, skill: str, sha: str | None) -> int: ...


@dataclass(frozen=True)
class Refusal:
    intent: ActionIntent
    guard: str
    reason: str


# Events that report something a person (or Holon) wrote: Holon's own never ask it for work.
WRITTEN = (
    "github.issue_comment.",
    "github.pull_request_review.",
    "github.pull_request_review_comment.",
    "github.pull_request_review_thread.",
    "github.commit_comment.",
    "github.discussion_comment.",
)


def looks_like_bot(login: str, account_type: str | None = None) -> bool:
    """GitHub says it is a Bot, or the login is an app's (`name[bot]`): never trusted for it."""
    return account_type == "Bot" or login.casefold().endswith("[bot]")


def bot_allowed(login: str, allowed: tuple[str, ...] | list[str]) -> bool:
    """Only an exact login of `settings.allowed_bots` (GitHub's logins ignore case)."""
    return any(login.casefold() == name.casefold() for name in allowed)


# A review asks for work by itself (changes requested starts a fix): it is a command's equal.
REVIEWS = (
    "github.pull_request_review.",
    "github.pull_request_review_comment.",
    "github.pull_request_review_thread.",
)


def _commanding(env: EventEnvelope) -> bool:
    return env.command is not None or env.type.endswith((".labeled", ".unlabeled"))


def retries_failed(env: EventEnvelope) -> bool:
    """Whether the event may run a skill again where it already failed: a person asked (a
    `/holon` command, a label added or removed), or Holon's own event continues what a run just
    did (publishing a new run's output repeats nothing). Anything else (a review, a check's
    failure, a re-activation, a tick) is automatic: it does not repeat a failed run blindly."""
    return env.via == "internal" or _commanding(env)


# The check run Holon keeps on a pull request's head (`github/checks.py`).
HOLON_CHECK = "Holon"


def _app_login(check: dict[str, Any]) -> str | None:
    app = check.get("app")
    slug = app.get("slug") if isinstance(app, dict) else None
    return f"{slug}[bot]" if isinstance(slug, str) and slug else None  # an app's bot login


def own_check(env: EventEnvelope, facts: RepoFacts) -> bool:
    """Holon's own `Holon` check run (or a check suite of Holon's app): it fails when Holon's
    work did, and a fix started on that would fail it again, in a loop. Another check of the
    same app (a workflow's, when Holon writes with Actions' token) is not Holon's."""
    kind = env.type.removeprefix("github.").partition(".")[0]
    check = env.payload.get(kind) if kind in ("check_run", "check_suite") else None
    if not isinstance(check, dict):
        return False
    app = _app_login(check)
    by_holon = app is not None and facts.is_holon(app)
    if kind == "check_suite":
        return by_holon
    sender = env.actor.login if env.actor is not None else None
    named = check.get("name") == HOLON_CHECK
    return named and (by_holon or (sender is not None and facts.is_holon(sender)))


def own_event(env: EventEnvelope, facts: RepoFacts) -> bool:
    """Holon's own comment, review, label, command or check run: it must not loop on them."""
    if own_check(env, facts):
        return True
    if env.actor is None or not facts.is_holon(env.actor.login):
        return False
    return _commanding(env) or env.type.startswith(WRITTEN)


def foreign_problem(env: EventEnvelope, served: str | None) -> str | None:
    """Why an event is from another repository than the one Holon serves (`served`, None:
    any), or None. GitHub delivers an app's or an org's hooks for every repository it covers;
    work decided on one from elsewhere would run the agent for someone Holon does not serve."""
    repo = env.scope.repo
    if served is None or (repo is not None and repo.casefold() == served.casefold()):
        return None
    return (
        f"{repo or 'an event without a repository'} is not the repository Holon serves ({served})"
    )


def authority_problem(env: EventEnvelope, facts: RepoFacts, policy: Policy) -> str | None:
    """Why this event's actor may not command Holon, or None when they may (or need not)."""
    if own_event(env, facts):
        if own_check(env, facts):
            return "the check is Holon's own: its failure asks no work"
        return f"{env.actor.login if env.actor else 'Holon'} is Holon: its own writing asks no work"
    # A label removed asks as much as one added: a policy may start work on it, or lift a hold.
    commanding = _commanding(env) or env.type.startswith(REVIEWS)
    if not commanding or env.actor is None:
        return None
    return actor_problem(env, facts, policy)


def actor_problem(env: EventEnvelope, facts: RepoFacts, policy: Policy) -> str | None:
    """Why the event's actor could not command Holon, whatever the event asks (None: they
    could, or there is no actor). A model decider is asked only for actors who could: it
    may start work on any event, not only on a command (agent_decider.py)."""
    actor = env.actor
    if actor is None:
        return None
    if actor.is_bot or looks_like_bot(actor.login, actor.type):
        if bot_allowed(actor.login, policy.settings.allowed_bots):
            return None  # the operator vouches for it by its exact login
        return f"{actor.login} is a bot, and settings.allowed_bots does not name it"
    if actor.authority == "owner":
        return None
    if actor.authority == "none":
        return f"{actor.login} ({actor.association}) has no write access to this repository"
    repo = env.scope.repo
    permission = facts.permission(repo, actor.login) if repo else None
    if permission is None:
        return f"cannot verify {actor.login}'s permission on this repository"
    if not at_least(permission, policy.settings.authority):
        return f"{actor.login} has {permission} access; Holon needs {policy.settings.authority}"
    return None


def _merge_problem(
    intent: ActionIntent, facts: RepoFacts, policy: Policy, event_repo: str | None
) -> str | None:
    if not policy.settings.allow_merge:
        return "the policy does not allow merging"
    repo, number = intent.target.repo, intent.target.id
    # The kind, not just a numeric id: an issue or a check suite has a number too.
    if repo is None or intent.target.kind != "pull_request" or not number.isdigit():
        return "merge needs a pull request target"
    # A decider (a model, one day) must not reach past the repository the event came from.
    if event_repo is None or repo.casefold() != event_repo.casefold():
        return "the merge target is not in the event's repository"
    pull = facts.pull(repo, int(number))
    if pull is None:
        return "cannot verify the pull request's approval and checks"
    sha = str(intent.args.get("sha"))
    if pull.head_sha != sha:
        return f"head moved to {pull.head_sha[:12]}; not merging {sha[:12]}"
    base = intent.args.get("base")
    if not isinstance(base, str) or not base:
        return "the merge names no base branch it was decided for"
    if pull.base_ref is None:
        return "cannot verify the pull request's base branch"
    if pull.base_ref != base:  # retargeted since: merging now would land where nobody decided
        return f"the base branch is now {pull.base_ref}; the merge was decided for {base}"
    if not pull.approved:
        return "the pull request is not approved"
    if pull.stale:
        return "the approval predates the current head"
    green = facts.checks_green(repo, sha)
    if green is not True:
        return (
            "required checks are not green on that sha"
            if green is False
            else ("cannot verify the required checks on that sha")
        )
    return None


def guard(
    intents: list[ActionIntent],
    env: EventEnvelope,
    *,
    ledger: Ledger,
    facts: RepoFacts,
    policy: Policy,
    now: datetime,
    budget_left: int,
    authority: str | None,
) -> tuple[list[ActionIntent], list[Refusal]]:
    """`authority` is `authority_problem(...)` for this event, computed once by the caller
    (it may cost a permission look-up)."""
    accepted: list[ActionIntent] = []
    refused: list[Refusal] = []
    problem = authority
    cooldown = timedelta(seconds=policy.settings.cooldown)
    for intent in intents:
        subject = intent.target.subject()
        reason: tuple[str, str] | None = None
        home, there = env.scope.repo, intent.target.repo
        if problem is not None:
            # Holon's own events are not refused with a polite comment: that would be one more.
            reason = ("self" if own_event(env, facts) else "authority", problem)
        elif home is not None and there is not None and there.lower() != home.lower():
            # An event acts on its own repository only, whoever proposed otherwise.
            reason = ("repository", f"{there} is another repository than the event's ({home})")
        elif intent.decider == "agent" and intent.type not in policy.settings.decider_actions:
            # A model reads text anyone may have written: it does only what the policy lets it.
            reason = (
                "model_actions",
                f"the policy does not let the model decider {intent.type} "
                "(settings.decider_actions)",
            )
        elif intent.type == "run_skill":
            skill = str(intent.args["skill"])
            sha = intent.args.get("head_sha")
            if ledger.active_skill(subject, skill):
                reason = ("duplicate", f"{skill} is already running on {subject}")
            elif skill in PER_SHA_SKILLS and sha and ledger.ran_for_sha(subject, skill, sha):
                reason = ("duplicate", f"{skill} already ran on {subject} for {sha[:12]}")
            elif not retries_failed(env) and (
                failed := ledger.failed_attempts(subject, skill, sha if sha else None)
            ) >= max(1, policy.settings.max_attempts):
                # A failed attempt is never repeated blindly: a new head or a person retries.
                reason = ("failed_before", repeat_refusal(skill, sha if sha else None, failed))
            elif (
                env.command is None
                and env.via != "internal"
                and continues(env.type, env.payload) is None
            ):
                # Holon's own event continues work already admitted (publishing a settled
                # run), as a re-activation does (within its own budget): the cooldown between
                # automatic runs does not hold them back.
                last = ledger.last_automatic_run(subject)
                if last is not None and now - last < cooldown:
                    reason = ("cooldown", f"{subject} is cooling down until {last + cooldown}")
        elif intent.type == "merge":
            why = _merge_problem(intent, facts, policy, env.scope.repo)
            reason = ("merge", why) if why else None
        if reason is None and len(accepted) >= budget_left:
            reason = ("budget", f"the per-pass budget of {policy.settings.budget} intents is spent")
        if reason is None:
            accepted.append(intent)
        else:
            refused.append(Refusal(intent, *reason))
    return accepted, refused
