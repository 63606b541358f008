"""What one pass did (`PassReport`), and the pass under way that builds it (`Pass`).

The report answers for the subjects the pass settled the closure of, and for nothing else: its
exit code and job conclusion are the most severe row of the closure table among those subjects'
closures (`mapping.worst_exit`), 0 and success when it settled none (a duplicate, an event no
rule acts on). A pass that kept its event while paused exits 2: nothing is decided until the
operator resumes. Older subjects in the state never decide a later pass's answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from holon.closure.mapping import (
    EXIT_HUMAN,
    JobConclusion,
    job_conclusion_of,
    worst_exit,
)
from holon.closure.record import ClosureRecord
from holon.controller.ledger import StateLedger
from holon.controller.parts import LoadedState, Parts
from holon.executor.result import ActionResult
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent
from holon.state.model import Record, RecordKind, ServeState

PassKind = Literal["event", "resumed", "recovery"]


class PassReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: PassKind = Field(
        description="event: one event handled; resumed: a kept event decided on resume; "
        "recovery: intents found inflight at start."
    )
    event_id: str | None = Field(description="The event; None for the recovery pass.")
    kept: bool = Field(default=False, description="Kept while paused: nothing was decided.")
    subjects: list[str] = Field(description="Subjects whose closure the pass settled, in order.")
    decisions: list[dict[str, Any]] = Field(description="The decision entries it journaled.")
    intents: list[ActionIntent] = Field(description="The intents it performed or settled.")
    results: list[ActionResult] = Field(description="Every attempt it performed, in order.")
    closures: dict[str, ClosureRecord] = Field(
        description="The closure of each of its subjects that has one (a unit without "
        "evidence has none)."
    )
    exit_code: int = Field(description="The most severe closure table row of its subjects.")
    job_conclusion: JobConclusion
    follow_ups: list[EventEnvelope] = Field(
        default_factory=list,
        description="Holon's own events the pass made (a skill run settled), for the loop to "
        "handle next, in order, like any event.",
    )
    ended_runs: list[ActionIntent] = Field(
        default_factory=list,
        description="The skill runs that ended in this pass, however they ended: settled by "
        "their attempts, expired by a tick, cancelled by a stop, refused on recovery.",
    )
    deferred: list[ActionIntent] = Field(
        default_factory=list,
        description="The skill runs handed on to be performed elsewhere (fan-out's run jobs): "
        "left inflight, settled by whoever collects their output.",
    )


_REPORT_FIELDS = set(PassReport.model_fields)


@dataclass
class Pass:
    """One pass at work: what it was given, and what it did so far."""

    parts: Parts
    loaded: LoadedState
    kind: PassKind
    event_id: str | None
    kept: bool = False
    decisions: list[dict[str, Any]] = field(default_factory=list)
    intents: list[ActionIntent] = field(default_factory=list)
    results: list[ActionResult] = field(default_factory=list)
    follow_ups: list[EventEnvelope] = field(default_factory=list)
    ended_runs: list[ActionIntent] = field(default_factory=list)
    deferred: list[ActionIntent] = field(default_factory=list)
    # Every subject settled, in order; None where the unit left no evidence (no closure).
    closures: dict[str, ClosureRecord | None] = field(default_factory=dict)

    @property
    def state(self) -> ServeState:
        return self.loaded.state

    @property
    def ledger(self) -> StateLedger:
        return self.loaded.ledger

    def put(self, kind: RecordKind, key: str, status: str, data: dict[str, Any]) -> Record:
        record = Record.fresh(kind, key, status, self.parts.clock(), self.parts.writer, data)
        self.state.put(record)
        return record

    def delete(self, kind: RecordKind, key: str) -> None:
        # Nothing live to delete (as for most events' queued mark): the state's delete would
        # do nothing, so the clock is not read for it.
        if self.state.get(kind, key) is not None:
            self.state.delete(kind, key, at=self.parts.clock(), writer=self.parts.writer)

    def run_ended(self, intent: ActionIntent | None) -> None:
        """Note a skill run that ended in this pass (what announced it can now settle)."""
        if intent is not None and intent.type == "run_skill":
            self.ended_runs.append(intent)

    def journal(self, entry: dict[str, Any]) -> None:
        self.parts.journals.decisions.append(entry)
        self.decisions.append(entry)

    def report(self) -> PassReport:
        closures = {s: c for s, c in self.closures.items() if c is not None}
        code = EXIT_HUMAN if self.kept else worst_exit(c.exit_code for c in closures.values())
        # Built from the pass's own values, already validated as they were made: not again
        # (copied, as validation would copy them).
        values = {
            "kind": self.kind,
            "event_id": self.event_id,
            "kept": self.kept,
            "subjects": list(self.closures),
            "decisions": list(self.decisions),
            "intents": list(self.intents),
            "results": list(self.results),
            "closures": closures,
            "exit_code": code,
            "job_conclusion": job_conclusion_of(code),
            "follow_ups": list(self.follow_ups),
            "ended_runs": list(self.ended_runs),
            "deferred": list(self.deferred),
        }
        # What `model_construct` makes of every field given, without its per-field walk (a
        # pass's report is made for every event).
        report = PassReport.__new__(PassReport)
        object.__setattr__(report, "__dict__", values)
        object.__setattr__(report, "__pydantic_fields_set__", _REPORT_FIELDS)
        object.__setattr__(report, "__pydantic_extra__", None)
        object.__setattr__(report, "__pydantic_private__", None)
        return report


def intent_of(record: Record) -> ActionIntent | None:
    """The intent an unsettled intent record holds; None when it holds none this build reads,
    or another intent than the record's (a restored state is not trusted)."""
    try:
        intent = ActionIntent.model_validate(record.data.get("intent"))
    except ValidationError:
        return None
    same = intent.id == record.key and intent.target.subject() == record.data.get("subject")
    return intent if same else None


__all__ = ["Pass", "PassKind", "PassReport", "intent_of"]
