"""The `agent` decider: a model proposes the intents, within the vocabulary
(docs/controller-agent.md).

The model is asked once, through one `decide` tool (or one JSON object as its whole answer);
an invalid answer (prose, an unknown action, malformed JSON, another repository) gets exactly
one repair request saying what was wrong, and then the fallback decider (the policy) decides,
the decision saying why in `fallback`. A provider that fails (an error, a timeout, a 5xx) hands
over at once. The controller's own actions (`/holon stop`, `status`, `help`, a timer's
re-check) and the mechanics of Holon's own events (a settled run's publishing, a re-activation)
are the fallback's without asking the model, and so is every event of an actor who could not
command Holon (an outsider, a bot not allowed, Holon itself). What the model proposes becomes
ordinary `Proposal`s: validation, guardrails, the per-pass limit, dedupe and cooldown apply
unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from holon.agent.conversation import (
    AssistantMessage,
    Message,
    ModelTurn,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from holon.agent.providers.base import Provider, ProviderError
from holon.controller.budget import decider_allowed
from holon.controller.decide import Decider, Decision
from holon.controller.decider_output import Invalid, decide_tool, read_decision, scrub
from holon.controller.decider_prompt import SkillLine, system_prompt, user_prompt, vocabulary
from holon.controller.facts import RepoFacts
from holon.controller.guardrails import actor_problem, own_event
from holon.controller.memory import Spend
from holon.controller.policy import Policy
from holon.controller.view import ControllerView
from holon.gateway.continuation import DISPATCH_TYPE, asks_to_continue
from holon.gateway.envelope import EventEnvelope, is_internal
from holon.secrets import Redactor
from holon.skills.catalog import default_catalog, host_skills

MAX_TOKENS = 2048  # of one answer: a decision is short
# Commands that are the controller's own (the policy's special actions): never the model's.
POLICY_COMMANDS = ("stop", "status", "help", "unknown")


def offered_skills() -> list[SkillLine]:
    """The skills a decision may run: the built-in catalog's, less Holon's own host skills."""
    catalog = default_catalog()
    host = host_skills(catalog)
    lines = []
    for name in sorted(catalog.names() - host):
        skill = catalog.get(name)
        lines.append(SkillLine(name, skill.description if skill is not None else ""))
    return lines


class AgentDecider:
    name = "agent"

    def __init__(
        self,
        provider: Provider,
        policy: Policy,
        facts: RepoFacts,
        *,
        fallback: Decider,
        guidance: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.provider = provider
        self.policy = policy
        self.facts = facts
        self.fallback = fallback
        self.clock = clock
        # Known secret values to mask in what the model writes (deciders.py sets the
        # environment's); secret-looking words are masked whatever this holds.
        self.redactor = Redactor()
        skills = offered_skills()
        self.skills = frozenset(s.name for s in skills)
        offered = vocabulary(policy)
        # The same for every event: made once.
        self.system = system_prompt(policy, skills, guidance, offered)
        self.tools = [decide_tool(offered)]

    def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision:
        handed = self._policy_only(envelope) or self._over_budget(view)
        if handed is not None:
            return replace(self.fallback.decide(envelope, view), fallback=handed)
        messages: list[Message] = [UserMessage(text=user_prompt(envelope, view))]
        usage = Usage()
        model = self.provider.model
        start = self.clock()
        problem: Invalid | None = None
        for attempt in range(2):  # the answer, and one repair
            try:
                turn = self.provider.complete(
                    self.system, messages, self.tools, max_tokens=MAX_TOKENS
                )
            except (ProviderError, TimeoutError, OSError) as exc:
                why = f"the model could not be asked: {scrub(str(exc), self.redactor)}"
                return self._fall_back(envelope, view, why, model, usage, start)
            usage = usage + turn.usage
            model = turn.model or model
            read = read_decision(turn, envelope, self.facts, self.redactor, self.skills)
            if not isinstance(read, Invalid):
                return Decision(
                    self.name,
                    read.rationale,
                    None,
                    read.proposals,
                    model=model,
                    usage=_spend(usage),
                    latency_ms=self._since(start),
                )
            problem = read
            if attempt == 0:
                messages += _repair(turn, read.problem)
        assert problem is not None
        why = f"invalid model output after one repair: {problem.problem}"
        return self._fall_back(envelope, view, why, model, usage, start)

    def _over_budget(self, view: ControllerView) -> str | None:
        """Why the model is not asked today: the day's model budget is spent (the pass gives
        the day's spend in the view when a day limit is set)."""
        if view.day is None or view.day_spend is None:
            return None
        reached = decider_allowed(self.policy.settings.budgets, view.day, view.day_spend)
        return None if reached is None else f"the model is not asked: {reached.line}"

    def _policy_only(self, env: EventEnvelope) -> str | None:
        """Why the fallback decides `env` without the model, or None when the model decides."""
        if env.command is not None and env.command.name in POLICY_COMMANDS:
            word = env.command.word or "help"
            return f"/holon {word} is the controller's own command: the policy decider's"
        if env.type.startswith("timer."):
            return "a timer tick re-checks waits: the policy decider's"
        if is_internal(env):
            return "Holon's own event continues admitted work: the policy decider's"
        if env.type == DISPATCH_TYPE and asks_to_continue(env.payload):
            return "a re-activation continues the work in hand: the policy decider's"
        if own_event(env, self.facts):
            return "Holon's own writing asks no work: the policy decider's"
        # The guardrails check authority on commands; a model may start work on any event, so
        # it is asked only for someone who could command Holon (outsiders' text never reaches
        # it as a request, nor spends its tokens).
        problem = actor_problem(env, self.facts, self.policy)
        if problem is not None:
            return f"the model decides only for people who may command Holon: {problem}"
        return None

    def _fall_back(
        self,
        env: EventEnvelope,
        view: ControllerView,
        why: str,
        model: str,
        usage: Usage,
        start: float,
    ) -> Decision:
        decided = self.fallback.decide(env, view)
        return replace(
            decided,
            model=model,
            usage=_spend(usage),
            latency_ms=self._since(start),
            fallback=why,
        )

    def _since(self, start: float) -> float:
        return round((self.clock() - start) * 1000, 1)


def _spend(usage: Usage) -> Spend:
    # Priced by the budgets (pricing.py): here every token is still unpriced, never free.
    return Spend(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        unpriced_tokens=usage.total,
    )


def _repair(turn: ModelTurn, problem: str) -> Sequence[Message]:
    """The model's answer and what was wrong with it: one repair request."""
    ask = (
        f"That was not a valid decision: {problem}. Call `decide` once with a rationale and "
        "intents from the vocabulary (or answer with that one JSON object and nothing else)."
    )
    answer = AssistantMessage(text=turn.text, tool_calls=turn.tool_calls)
    if not turn.tool_calls:
        return [answer, UserMessage(text=ask)]
    # Every tool call is answered (providers require it), the first with the problem.
    results: list[Message] = [
        ToolResultMessage(call_id=call.id, name=call.name, text=ask, is_error=True)
        for call in turn.tool_calls
    ]
    return [answer, *results]


__all__ = ["MAX_TOKENS", "POLICY_COMMANDS", "AgentDecider", "offered_skills"]
