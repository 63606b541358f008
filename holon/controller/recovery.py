"""Intents found inflight at start, left by a process that stopped mid-effect: each is settled
from the actions journal when an attempt there succeeded (nothing is performed again), finished
from a skill run's output if it completed, recorded failed if it was cut off, and performed only
if it never started (`attempts.attempt`, the run_skill handler)."""

from __future__ import annotations

from holon.controller.attempts import attempt
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import Pass, PassReport
from holon.controller.settlement import settle_closures
from holon.intent import ActionIntent


def recover(loaded: LoadedState, parts: Parts) -> PassReport:
    """Reconcile intents left inflight: settle, finish or perform each."""
    p = Pass(parts, loaded, "recovery", None)
    subjects: list[str] = []
    for record in loaded.ledger.inflight():
        intent = ActionIntent.model_validate(record.data["intent"])
        attempt(p, intent, dict(record.data))
        subjects.append(intent.target.subject())
    settle_closures(p, subjects)
    return p.report()


__all__ = ["recover"]
