"""From a decision to the intents that may be performed: each proposal validated into an intent
(or rejected with why), the event's authority checked once, every intent through the guardrails
and the spend limits (spend_guard.py), and one polite refusal comment per subject and actor when
an actor lacks authority."""

from __future__ import annotations

from dataclasses import dataclass, field

from holon.controller.decide import Decision, target_of
from holon.controller.guardrails import Refusal, authority_problem, guard
from holon.controller.pass_report import Pass
from holon.controller.policy import Policy
from holon.controller.spend_guard import within_budget
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent, IntentRejected, make_intent


@dataclass(frozen=True)
class Verdict:
    accepted: list[ActionIntent]  # what the guardrails let through
    refused: list[Refusal]
    rejected: list[dict[str, str]]  # proposals outside the vocabulary, with why
    authorized: bool  # the event's actor may command Holon (or need not)
    refusal: ActionIntent | None = None  # the comment telling an actor why nothing happens
    # Let through, but beyond settings.intents_per_pass: held for a later pass (held.py).
    held: list[ActionIntent] = field(default_factory=list)
    # Skill runs a spend limit stops (also in `refused`): their subjects wait on the operator
    # once the pass has followed its commands (spend_guard.py).
    spent: list[Refusal] = field(default_factory=list)

    @property
    def performed(self) -> list[ActionIntent]:
        return [*self.accepted, *([self.refusal] if self.refusal is not None else [])]


def judge(p: Pass, env: EventEnvelope, decision: Decision) -> Verdict:
    parts = p.parts
    now = parts.clock()
    intents: list[ActionIntent] = []
    rejected: list[dict[str, str]] = []
    for proposal in decision.proposals:
        try:
            intents.append(
                make_intent(
                    type_=proposal.type,
                    target=proposal.target,
                    args=proposal.args,
                    reason=proposal.reason,
                    decider=decision.decider,
                    event_key=env.dedupe_key,
                    event_id=env.id,
                    at=now,
                    skills=parts.catalog.names(),
                    priority=proposal.priority,
                )
            )
        except IntentRejected as exc:
            rejected.append({"type": proposal.type, "reason": str(exc)})
    problem = authority_problem(env, parts.facts, parts.policy)
    if not intents:
        # Nothing to guard, limit or refuse (most events): what the steps below give for none.
        return Verdict([], [], rejected, problem is None)
    accepted, refused = guard(
        intents,
        env,
        ledger=p.ledger,
        facts=parts.facts,
        policy=parts.policy,
        now=now,
        budget_left=parts.policy.settings.budget,
        authority=problem,
    )
    accepted, spent = within_budget(p, accepted)
    accepted, held = within_limit(accepted, parts.policy.settings.intents_per_pass)
    refusal = refusal_comment(p, env, refused)
    return Verdict(accepted, [*refused, *spent], rejected, problem is None, refusal, held, spent)


def within_limit(
    accepted: list[ActionIntent], limit: int
) -> tuple[list[ActionIntent], list[ActionIntent]]:
    """At most `limit` intents performed for one event (settings.intents_per_pass); the rest,
    in decision order, are held: work a decider legitimately decided is not lost, it is
    performed by the next pass that continues its subject (held.py), `limit` at a time."""
    return accepted[:limit], accepted[limit:]


def limit_reason(limit: int) -> str:
    return f"more than {limit} intents for one event (settings.intents_per_pass)"


def refusal_body(policy: Policy) -> str:
    return (
        f"Holon only takes commands from people with {policy.settings.authority} access "
        "to this repository, so this request was not acted on."
    )


def is_refusal_comment(intent: ActionIntent, policy: Policy) -> bool:
    """The controller's own refusal comment, word for word: it answers an actor who lacks
    authority, so that actor's lack of authority must not stop it."""
    return (
        intent.type == "comment"
        and intent.decider == "controller"
        and intent.args.get("kind") == "refusal"
        and intent.args.get("body") == refusal_body(policy)
    )


def refusal_comment(p: Pass, env: EventEnvelope, refused: list[Refusal]) -> ActionIntent | None:
    """One polite refusal per subject and actor when an actor lacks authority."""
    if not any(r.guard == "authority" for r in refused) or env.actor is None:
        return None
    target = target_of(env)
    key = f"refusal:{target.subject()}:{env.actor.login}"
    if p.state.get("cooldown", key) is not None:
        return None
    p.put("cooldown", key, "done", {"subject": target.subject()})
    return make_intent(
        type_="comment",
        target=target,
        args={"body": refusal_body(p.parts.policy), "kind": "refusal"},
        reason="refusal",
        decider="controller",
        event_key=env.dedupe_key,
        event_id=env.id,
        at=p.parts.clock(),
        skills=p.parts.catalog.names(),
    )


__all__ = [
    "Verdict",
    "is_refusal_comment",
    "judge",
    "limit_reason",
    "refusal_body",
    "refusal_comment",
    "within_limit",
]
