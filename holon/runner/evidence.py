"""The evidence a finished `holon run` leaves, so its closure comes from the same derivation."""

from __future__ import annotations

from holon.closure.evidence import (
    Evidence,
    EvidenceItem,
    Question,
    RunItem,
    Unit,
    WaitItem,
)
from holon.runner.record import RunResult


def evidence_of_run(result: RunResult) -> Evidence:
    at = result.ended_at
    items: list[EvidenceItem] = []
    state = result.status
    items.append(
        RunItem(
            id=f"run:{result.run_id}",
            source="runner",
            at=at,
            state=state,
            outcome=result.outcome if state != "interrupted" else None,
            reason=result.reason,
        )
    )
    manifest = result.manifest
    if result.outcome == "needs_human" and manifest is not None and manifest.question is not None:
        items.append(
            WaitItem(
                id=f"question:{manifest.question.id}",
                source="manifest",
                at=at,
                on="operator",
                question=Question(id=manifest.question.id, text=manifest.question.text),
            )
        )
    return Evidence(unit=Unit(kind="turn", id=result.run_id), items=items)
