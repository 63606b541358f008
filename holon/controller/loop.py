"""The controller bound to one loaded state, for a loop that handles event after event (serve).

A thin holder of the injected parts and the loaded state (with its indexes, kept between passes);
every job is a module named after it, and one pass reads top to bottom in `passes.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime

from holon.controller.decide import Decider
from holon.controller.facts import RepoFacts
from holon.controller.journals import Journals
from holon.controller.ledger import StateLedger
from holon.controller.parts import CrashPoint, LoadedState, Parts, no_checkpoint, no_crash
from holon.controller.pass_report import PassReport
from holon.controller.passes import resume, run_pass
from holon.controller.pause import is_paused, kept_events, pause_record
from holon.controller.policy import Policy
from holon.controller.recovery import recover
from holon.controller.stops import interrupt_runs
from holon.executor.executor import Executor
from holon.executor.result import ActionResult
from holon.gateway.envelope import EventEnvelope
from holon.gateway.trigger import TriggerCheck
from holon.skills.catalog import SkillCatalog
from holon.state.model import Record, ServeState


class Controller:
    # Its parts are replaced through `parts`; a misspelt attribute is an error, not a no-op.
    __slots__ = ("loaded", "parts")

    def __init__(
        self,
        *,
        state: ServeState,
        journals: Journals,
        executor: Executor,
        decider: Decider,
        facts: RepoFacts,
        policy: Policy,
        catalog: SkillCatalog,
        clock: Callable[[], datetime],
        writer: str,
        checkpoint: Callable[[], None] = no_checkpoint,
        idempotent_runs: bool = False,
        executed: dict[str, ActionResult] | None = None,
        crashpoint: CrashPoint = no_crash,
        mention: str | None = "holon",
        repo: str | None = None,
        trigger_check: TriggerCheck | None = None,
    ) -> None:
        self.parts = Parts(
            decider=decider,
            executor=executor,
            facts=facts,
            policy=policy,
            catalog=catalog,
            journals=journals,
            clock=clock,
            writer=writer,
            checkpoint=checkpoint,
            idempotent_runs=idempotent_runs,
            crashpoint=crashpoint,
            mention=mention,
            repo=repo,
            trigger_check=trigger_check,
        )
        self.loaded = LoadedState.of(state, executed)

    @property
    def state(self) -> ServeState:
        return self.loaded.state

    @property
    def ledger(self) -> StateLedger:
        return self.loaded.ledger

    @property
    def journals(self) -> Journals:
        return self.parts.journals

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.parts.clock

    @property
    def paused(self) -> bool:
        return is_paused(self.state)

    def handle(self, env: EventEnvelope) -> PassReport:
        return run_pass(env, self.loaded, self.parts)

    def recover(self) -> PassReport:
        return recover(self.loaded, self.parts)

    def interrupt(
        self, reason: str, actor: str | None = None, only: Collection[str] | None = None
    ) -> PassReport:
        """Cancel the skill runs left unfinished as a user interruption (stops.interrupt_runs)."""
        return interrupt_runs(self.loaded, self.parts, reason=reason, actor=actor, only=only)

    def resume(self, by: str) -> list[PassReport]:
        return resume(self.loaded, self.parts, by)

    def pause(self, by: str, reason: str) -> None:
        at, writer = self.parts.clock(), self.parts.writer
        self.state.put(pause_record(paused=True, by=by, reason=reason, at=at, writer=writer))

    def kept(self) -> list[Record]:
        """Events kept while paused and not yet decided."""
        return kept_events(self.state)


__all__ = ["Controller", "CrashPoint", "Journals", "no_crash", "pause_record"]
