"""Running a decider on a scenario as the controller would, and scoring what it performs.

The decider is not asked in isolation: the scenario's event goes through the controller's own
pass (`holon.controller.passes.run_pass`) over the scenario's state, with a dry-run executor
and in-memory journals, so deduplication, pausing, the served repository, re-activation, the
guardrails (`guarding.judge`), the refusal comment and the per-pass limit all apply exactly as
they do in `holon serve` and `holon action`. What is scored is what that pass performed (and
what it held for a later pass): a decider that proposes a merge the guardrails refuse is not
unsafe; one whose merge would have been performed is.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holon.controller.decide import Decider, Decision, PolicyDecider
from holon.controller.journals import Journals
from holon.controller.ledger import is_held
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import intent_of
from holon.controller.passes import run_pass
from holon.controller.policy import Policy
from holon.controller.view import ControllerView
from holon.eval.scenario import Scenario
from holon.eval.scoring import Verdict, forbidden, verdict
from holon.eval.world import World, prepare
from holon.executor.executor import build_executor
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent
from holon.skills.catalog import SkillCatalog, default_catalog
from holon.state.journal import Journal

AGENT_MODULE = "holon.controller.agent_decider"


class MemoryJournal(Journal):
    """A journal kept in memory: an evaluation writes no file."""

    def __init__(self, name: str) -> None:
        super().__init__(Path(name))
        self.entries: list[dict[str, Any]] = []

    def _write(self, data: bytes) -> None:
        # Every way of appending ends here, encoded as a file's lines would be: kept as entries,
        # never a file (the journal's path is only a name: it would be in the cwd).
        self.entries.extend(json.loads(line) for line in data.splitlines() if line)


class _Observed:
    """The decider under evaluation, its decision kept for the report. The scenario's memory
    is shown to it when the controller's view does not carry one (yet)."""

    def __init__(self, inner: Decider, world: World) -> None:
        self.inner = inner
        self.name = inner.name
        self.world = world
        self.decision: Decision | None = None

    def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision:
        memory = self.world.scenario.state.memory
        if memory is not None and view.subject is not None and view.subject.memory is None:
            view = dataclasses.replace(
                view, subject=dataclasses.replace(view.subject, memory=memory)
            )
        self.decision = self.inner.decide(envelope, view)
        return self.decision


@dataclass(frozen=True)
class Contender:
    """A decider the corpus is scored for: a column of the table."""

    name: str
    make: Callable[[World], Decider] | None
    unavailable: str | None = None  # why it cannot be scored here


def policy_contender() -> Contender:
    return Contender("policy", lambda world: PolicyDecider(world.policy, world.facts))


def agent_contender() -> Contender:
    """The agent decider with each scenario's recorded answer replayed (imported lazily: it
    needs the agent's provider stack, and it may not be part of this build)."""
    try:
        module = importlib.import_module(AGENT_MODULE)
        agent_class = module.AgentDecider
    except ImportError as exc:
        return Contender("agent", None, f"{AGENT_MODULE} cannot be imported ({exc})")
    except AttributeError:
        return Contender("agent", None, f"{AGENT_MODULE} has no AgentDecider")
    from holon.agent.providers.scripted import ScriptedProvider
    from holon.eval.replay import turns_for

    def make(world: World) -> Decider:
        provider = ScriptedProvider(turns_for(world.scenario.answer))
        fallback = PolicyDecider(world.policy, world.facts)
        decider: Decider = agent_class(provider, world.policy, world.facts, fallback=fallback)
        return decider

    return Contender("agent", make)


def describe(intent: ActionIntent) -> str:
    """One short line for an intent: its type, what distinguishes it, its subject."""
    detail = next(
        (str(intent.args[k]) for k in ("skill", "kind", "on", "label") if intent.args.get(k)),
        None,
    )
    middle = f" {detail}" if detail else ""
    return f"{intent.type}{middle} on {intent.target.subject()}"


@dataclass(frozen=True)
class Outcome:
    scenario: str
    decider: str
    verdict: Verdict
    performed: list[str] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    rationale: str | None = None
    fallback: str | None = None  # why the agent decider's fallback decided, when it did
    error: str | None = None
    expected: str = "ok"  # what the scenario expects of this decider (policy: may be wrong)

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _journals() -> Journals:
    return Journals(MemoryJournal("events"), MemoryJournal("decisions"), MemoryJournal("actions"))


def run(world: World, contender: Contender, catalog: SkillCatalog | None = None) -> Outcome:
    """The controller's pass over the scenario with the contender deciding, scored."""
    assert contender.make is not None
    scenario = world.scenario
    expected = scenario.expect.policy if contender.name == "policy" else "ok"
    try:
        observed = _Observed(contender.make(world), world)
        parts = Parts(
            decider=observed,
            executor=build_executor(dry_run=True, clock=world.clock, run_skill=None),
            facts=world.facts,
            policy=world.policy,
            catalog=catalog or default_catalog(),
            journals=_journals(),
            clock=world.clock,
            writer="eval",
            idempotent_runs=True,
            repo=scenario.serves,
        )
        loaded = LoadedState.of(world.state())
        report = run_pass(world.envelope, loaded, parts)
    except Exception as exc:
        # The class only: a message could quote what the decider was given.
        return Outcome(
            scenario.name, contender.name, "error", error=type(exc).__name__, expected=expected
        )
    held = [
        found
        for record in loaded.state.live("intent")
        if is_held(record) and record.data.get("event_id") == world.envelope.id
        if (found := intent_of(record)) is not None
    ]
    performed = [*report.intents, *held]
    entry = next((d for d in report.decisions if d.get("outcome") == "decided"), {})
    decision = observed.decision
    return Outcome(
        scenario=scenario.name,
        decider=contender.name,
        verdict=verdict(performed, scenario.expect),
        performed=[describe(i) for i in performed],
        unsafe=[describe(i) for i in forbidden(performed, scenario.expect.forbidden)],
        refused=[
            {"type": r["type"], "guard": r["guard"], "reason": r["reason"]}
            for r in entry.get("refused", [])
        ],
        rejected=list(entry.get("rejected", [])),
        rationale=decision.rationale if decision is not None else None,
        fallback=getattr(decision, "fallback", None),
        expected=expected,
    )


@dataclass(frozen=True)
class Results:
    scenarios: list[str]
    contenders: list[Contender]
    outcomes: dict[tuple[str, str], Outcome]  # (scenario, decider) -> outcome

    def column(self, name: str) -> list[Outcome]:
        return [self.outcomes[(s, name)] for s in self.scenarios if (s, name) in self.outcomes]


def evaluate(
    scenarios: Sequence[Scenario], contenders: Sequence[Contender], policy: Policy | None = None
) -> Results:
    """Every scenario for every available contender, under `policy` (default the built-in
    one). Worlds are built first, so a scenario that cannot be built is refused (InvalidInput)
    before any decider runs."""
    worlds = [prepare(s, policy) for s in scenarios]
    catalog = default_catalog()
    outcomes: dict[tuple[str, str], Outcome] = {}
    for contender in contenders:
        if contender.make is None:
            continue
        for world in worlds:
            outcomes[(world.scenario.name, contender.name)] = run(world, contender, catalog)
    return Results([s.name for s in scenarios], list(contenders), outcomes)


__all__ = [
    "AGENT_MODULE",
    "Contender",
    "MemoryJournal",
    "Outcome",
    "Results",
    "agent_contender",
    "describe",
    "evaluate",
    "policy_contender",
    "run",
]
