"""A subject's closure, settled after a pass changed its work.

Derived from the evidence of the subject's current unit of work (`ledger.evidence`) and kept in
the state; a unit without evidence (say, only a usage comment) removes the closure an earlier
unit left, which no longer describes the subject. Every subject settled joins the pass's report.
"""

from __future__ import annotations

from collections.abc import Iterable

from holon.closure.derive import derive_closure
from holon.closure.record import ClosureRecord
from holon.controller.pass_report import Pass
from holon.controller.remembering import remember_closure


def settle_closure(p: Pass, subject: str) -> None:
    evidence = p.ledger.evidence(subject)
    if evidence is None:
        p.delete("closure", subject)
        p.closures[subject] = None
        return
    record = ClosureRecord.of(derive_closure(evidence))
    p.put("closure", subject, "live", record.model_dump(mode="json"))
    p.closures[subject] = record
    remember_closure(p, subject, record)


def settle_closures(p: Pass, subjects: Iterable[str]) -> None:
    for subject in dict.fromkeys(subjects):  # each once, in order
        settle_closure(p, subject)


__all__ = ["settle_closure", "settle_closures"]
