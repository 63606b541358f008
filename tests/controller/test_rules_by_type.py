"""`PolicyDecider` asks only the rules whose `on` can take the event's type: the same decision
as asking every rule in order, for every example event and several policies, and a replaced
policy is asked anew."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from holon.controller import decide
from holon.controller.decide import Decision, PolicyDecider, _matches
from holon.controller.facts import StaticFacts
from holon.controller.policy import Policy, load_policy, parse_policy
from holon.controller.view import ControllerView
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from tests.gateway.conftest import examples

NOW = datetime(2026, 11, 21, tzinfo=UTC)
VIEW = ControllerView(paused=False, subject=None)


def _every_rule(decider: PolicyDecider, env: EventEnvelope) -> Decision:
    """The decision as made before: every rule asked, in order."""
    for rule in decider.policy.rules:
        if _matches(rule, env, decider.policy, decider.facts):
            return decider._apply(rule, env, VIEW)
    return Decision(decider.name, f"no rule matches {env.type}")


def _envelopes() -> list[EventEnvelope]:
    found = []
    for event, payloads in examples().items():
        for i, payload in enumerate(payloads):
            body = json.loads(json.dumps(payload))
            found.append(normalize(event, body, via="replay", received_at=NOW, delivery=f"d{i}"))
    return found


def _any_event_policy() -> Policy:
    return parse_policy(
        """
version: 1
rules:
  - name: any-star
    on: [github.star.created]
    do: noop
  - name: anything
    do: noop
"""
    )


def test_the_decisions_are_those_of_every_rule_asked_in_order() -> None:
    envelopes = _envelopes()
    for policy in (load_policy(None), _any_event_policy()):
        decider = PolicyDecider(policy, StaticFacts())
        for env in envelopes:
            assert decider.decide(env, VIEW) == _every_rule(decider, env)
            # Asked again: the rules kept for the type give the same decision.
            assert decider.decide(env, VIEW) == _every_rule(decider, env)


def test_a_replaced_policy_is_asked_anew() -> None:
    star = next(e for e in _envelopes() if e.type == "github.star.created")
    decider = PolicyDecider(load_policy(None), StaticFacts())
    first = decider.decide(star, VIEW)
    assert first.rule is None
    decider.policy = _any_event_policy()
    assert decider.decide(star, VIEW).rule == "any-star"


def test_rules_naming_other_events_are_not_asked(monkeypatch: Any) -> None:
    asked: list[str] = []
    original = decide._matches

    def counted(rule: Any, *args: Any) -> bool:
        asked.append(rule.name)
        return original(rule, *args)

    monkeypatch.setattr(decide, "_matches", counted)
    star = next(e for e in _envelopes() if e.type == "github.star.created")
    policy = _any_event_policy()
    PolicyDecider(policy, StaticFacts()).decide(star, VIEW)
    assert asked == ["any-star"]
    asked.clear()
    push = next(e for e in _envelopes() if e.type == "github.push")
    PolicyDecider(policy, StaticFacts()).decide(push, VIEW)
    assert asked == ["anything"]  # `any-star` names other events: not asked
