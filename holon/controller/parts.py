"""What a pass works with: the parts injected into it, and the state it works on.

A pass performs no I/O of its own: the journals, the executor (its handlers), the repository
facts, the clock and the checkpoint are handed to it (`Parts`). The loaded state travels with the
indexes derived from it (`LoadedState`); a loop handling many events keeps one between passes, so
an event costs work proportional to its subject, not to the whole history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from holon.controller.decide import Decider
from holon.controller.facts import RepoFacts
from holon.controller.journals import Journals
from holon.controller.ledger import StateLedger
from holon.controller.policy import Policy
from holon.executor.executor import Executor
from holon.executor.result import ActionResult
from holon.gateway.trigger import TriggerCheck
from holon.skills.catalog import SkillCatalog
from holon.state.model import ServeState

CrashPoint = Callable[[str], None]


def no_crash(name: str) -> None:
    """The default crash hook: the named write points pass by."""


def no_checkpoint() -> None:
    """The default checkpoint: a caller that saves the state only after the pass."""


@dataclass
class Parts:
    decider: Decider
    executor: Executor
    facts: RepoFacts
    policy: Policy
    catalog: SkillCatalog
    journals: Journals
    clock: Callable[[], datetime]
    writer: str
    # Saves the state; called before a skill run starts so its inflight record is durable.
    checkpoint: Callable[[], None] = no_checkpoint
    # In a dry run no effect leaves the process, so nothing needs a checkpoint before it.
    idempotent_runs: bool = False
    # Called with the name of each write point; crash-recovery tests inject one that kills.
    crashpoint: CrashPoint = no_crash
    # The mention commands are read with (`@holon`), also when a kept event is read again.
    mention: str | None = "holon"
    # The repository this controller serves (serve's `--repo`); None: each event's own.
    repo: str | None = None
    # Reads a write's trigger again before the write (frozen.py); None: offline or dry, the
    # check is skipped and the intent's record says so.
    trigger_check: TriggerCheck | None = None


@dataclass
class LoadedState:
    state: ServeState
    ledger: StateLedger
    # The last journaled result of every intent: an intent whose effect is already in the
    # actions journal is settled from it, never performed again (crash recovery, replays).
    executed: dict[str, ActionResult] = field(default_factory=dict)

    @classmethod
    def of(cls, state: ServeState, executed: dict[str, ActionResult] | None = None) -> LoadedState:
        return cls(state, StateLedger(state), dict(executed or {}))


__all__ = ["CrashPoint", "LoadedState", "Parts", "no_checkpoint", "no_crash"]
