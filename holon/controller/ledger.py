"""The controller's view of its own work: intents and waits per subject, from the serve state.

Keeps an index from subject to its intent and wait records so each event costs work proportional
to its subject, not to the whole history. Also builds a subject's closure evidence.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from holon.closure.evidence import (
    Evidence,
    EvidenceItem,
    InterruptionItem,
    Question,
    RunItem,
    TaskItem,
    Unit,
    WaitItem,
    WorkItem,
)
from holon.controller.view import IntentSummary, SubjectView, WaitSummary
from holon.state.model import Record, ServeState

SETTLED = ("succeeded", "failed", "refused", "expired", "cancelled")


class StateLedger:
    """Implements guardrails.Ledger over a ServeState, with per-subject indexes."""

    def __init__(self, state: ServeState) -> None:
        self.state = state
        self.intents: dict[str, list[str]] = defaultdict(list)
        self.waits: dict[str, list[str]] = defaultdict(list)
        for record in state.live("intent"):
            self.intents[record.data["subject"]].append(record.key)
        for record in state.live("wait"):
            self.waits[record.data["subject"]].append(record.key)

    def track_intent(self, record: Record) -> None:
        keys = self.intents[record.data["subject"]]
        if record.key not in keys:
            keys.append(record.key)

    def track_wait(self, record: Record) -> None:
        keys = self.waits[record.data["subject"]]
        if record.key not in keys:
            keys.append(record.key)

    def intent_records(self, subject: str) -> list[Record]:
        keys = self.intents.get(subject)
        if not keys:
            return []
        found = [r for key in keys if (r := self.state.get("intent", key)) is not None]
        # Settled intents pruned from the state leave the index too, so it stays as bounded
        # as the state.
        if len(found) != len(keys):
            if found:
                self.intents[subject] = [r.key for r in found]
            else:
                del self.intents[subject]
        return found

    def wait_records(self, subject: str) -> list[Record]:
        keys = self.waits.get(subject)
        if not keys:
            return []
        live = [r for key in keys if (r := self.state.get("wait", key)) is not None]
        if live:
            self.waits[subject] = [r.key for r in live]
        else:
            del self.waits[subject]
        return live

    def inflight(self) -> list[Record]:
        return [
            r
            for keys in self.intents.values()
            for k in keys
            if (r := self.state.get("intent", k)) is not None and r.status == "inflight"
        ]

    # -- guardrails.Ledger
    def active_skill(self, subject: str, skill: str) -> bool:
        return any(
            r.status in ("pending", "inflight") and r.data.get("skill") == skill
            for r in self.intent_records(subject)
        )

    def ran_for_sha(self, subject: str, skill: str, sha: str) -> bool:
        return any(
            r.data.get("skill") == skill
            and r.data.get("head_sha") == sha
            and r.status in ("pending", "inflight", "succeeded")
            for r in self.intent_records(subject)
        )

    def last_automatic_run(self, subject: str) -> datetime | None:
        times = [
            r.updated_at
            for r in self.intent_records(subject)
            if r.data.get("skill") and r.data.get("automatic")
        ]
        return max(times, default=None)

    # -- views and evidence
    def view(self, subject: str) -> SubjectView:
        records = self.intent_records(subject)
        summaries = [_summary(r) for r in records]
        closure = self.state.get("closure", subject)
        return SubjectView(
            subject=subject,
            inflight=[s for s in summaries if s.status in ("pending", "inflight")],
            recent=[s for s in summaries if s.status in SETTLED][-5:],
            waits=[_wait_summary(r) for r in self.wait_records(subject)],
            closure=closure.data if closure is not None else None,
        )

    def evidence(self, subject: str) -> Evidence | None:
        items: list[EvidenceItem] = []
        runs = [r for r in self.intent_records(subject) if r.data.get("type") == "run_skill"]
        if runs:
            items.extend(_run_items(max(runs, key=lambda r: (r.updated_at, r.key))))
        for record in self.intent_records(subject):
            if record.data.get("type") != "run_skill" and record.status == "failed":
                items.append(
                    TaskItem(
                        id=f"action:{record.key}",
                        source="executor",
                        at=record.updated_at,
                        task_id=record.key,
                        state="failed",
                        blocking=True,
                    )
                )
        for record in self.wait_records(subject):
            items.extend(_wait_items(record))
        if not items:
            return None
        return Evidence(unit=Unit(kind="turn", id=subject), items=items)


def _summary(record: Record) -> IntentSummary:
    result = record.data.get("result") or {}
    return IntentSummary(
        id=record.key,
        type=str(record.data.get("type")),
        status=record.status,
        skill=record.data.get("skill"),
        head_sha=record.data.get("head_sha"),
        attempts=int(record.data.get("attempts", 0)),
        error=result.get("error"),
    )


def wait_detail(data: dict[str, Any]) -> str:
    """One line saying what a wait waits for (status output, views)."""
    for field in ("reason", "condition", "until", "task_id"):
        if data.get(field):
            return str(data[field])
    question = data.get("question") or {}
    return str(question.get("text", "")) or "an operator decision"


def _wait_summary(record: Record) -> WaitSummary:
    return WaitSummary(
        id=record.key, on=str(record.data.get("on")), detail=wait_detail(record.data)
    )


def _run_items(record: Record) -> list[EvidenceItem]:
    at, status = record.updated_at, record.status
    result = record.data.get("result") or {}
    if result.get("dry_run"):
        # Nothing ran: the work is still to do, not done.
        return [WorkItem(id=f"run:{record.key}", source="controller", at=at, summary="dry run")]
    if status in ("pending", "inflight"):
        return [RunItem(id=f"run:{record.key}", source="controller", at=at, state="running")]
    if status == "cancelled":
        return [RunItem(id=f"run:{record.key}", source="controller", at=at, state="cancelled")]
    if status in ("failed", "expired"):
        reason = result.get("error") or status
        return [
            RunItem(id=f"run:{record.key}", source="executor", at=at, state="failed", reason=reason)
        ]
    outcome = result.get("run_outcome") or "success"
    return [
        RunItem(id=f"run:{record.key}", source="runner", at=at, state="completed", outcome=outcome)
    ]


def _wait_items(record: Record) -> list[EvidenceItem]:
    data, at = record.data, record.updated_at
    ident = f"wait:{record.key}"
    if data.get("interruption"):
        return [
            InterruptionItem(
                id=ident,
                source="controller",
                at=at,
                by=data["interruption"],
                actor=data.get("actor"),
            )
        ]
    if data["on"] == "task":
        task = str(data.get("task_id") or record.key)
        return [
            TaskItem(
                id=f"task:{task}",
                source="controller",
                at=at,
                task_id=task,
                state="running",
                blocking=True,
            ),
            WaitItem(id=ident, source="controller", at=at, on="task", task_id=task),
        ]
    question = data.get("question")
    return [
        WaitItem(
            id=ident,
            source="controller",
            at=at,
            on=data["on"],
            until=data.get("until"),
            condition=data.get("condition"),
            question=Question.model_validate(question) if question else None,
            reason=data.get("reason")
            or ("an operator decision" if data["on"] == "operator" and not question else None),
        )
    ]
