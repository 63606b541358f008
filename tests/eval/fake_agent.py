"""A stand-in for the agent decider (holon/controller/agent_decider.py, not part of this build
yet) with its interface: it asks the provider once, proposes the intents of the `decide` tool
call it gets, and lets the fallback decide otherwise. Installed as that module by
`installed_agent`, it lets the harness's agent column be tested end to end."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from holon.agent.conversation import UserMessage
from holon.agent.providers.base import Provider, ProviderError
from holon.controller.decide import Decider, Decision, Proposal, target_of
from holon.controller.facts import RepoFacts
from holon.controller.policy import Policy
from holon.controller.view import ControllerView
from holon.eval.harness import AGENT_MODULE
from holon.eval.replay import DECIDE_TOOL
from holon.gateway.envelope import EventEnvelope
from holon.intent import Target


class FakeAgentDecider:
    name = "agent"

    def __init__(
        self, provider: Provider, policy: Policy, facts: RepoFacts, *, fallback: Decider
    ) -> None:
        self.provider = provider
        self.fallback = fallback

    def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision:
        try:
            turn = self.provider.complete(
                "decide", [UserMessage(text=envelope.type)], [], max_tokens=1000
            )
        except ProviderError:
            return self.fallback.decide(envelope, view)
        call = next((c for c in turn.tool_calls if c.name == DECIDE_TOOL), None)
        if call is None or call.arguments is None:
            return self.fallback.decide(envelope, view)
        rationale = str(call.arguments.get("rationale") or "decided")
        proposals = [self._proposal(i, envelope, rationale) for i in call.arguments["intents"]]
        return Decision(self.name, rationale, None, proposals)

    @staticmethod
    def _proposal(intent: dict[str, Any], env: EventEnvelope, why: str) -> Proposal:
        target = target_of(env)
        given = intent.get("target")
        if isinstance(given, dict):
            target = Target(
                repo=given.get("repo", env.scope.repo), kind=given["kind"], id=given["id"]
            )
        return Proposal(intent["type"], target, dict(intent.get("args", {})), why)


@contextmanager
def installed_agent() -> Iterator[None]:
    """`holon.controller.agent_decider` importable, holding the stand-in, for the block."""
    module = types.ModuleType(AGENT_MODULE)
    module.AgentDecider = FakeAgentDecider  # type: ignore[attr-defined]
    before = sys.modules.get(AGENT_MODULE)
    sys.modules[AGENT_MODULE] = module
    try:
        yield
    finally:
        if before is None:
            del sys.modules[AGENT_MODULE]
        else:
            sys.modules[AGENT_MODULE] = before
