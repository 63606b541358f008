"""The `StepResult` of a serve that handled one step's events: its closures, the skill runs, the
handoff and comment of the event's subject, and what it decided and refused with why (read
from the passes' reports: the decision entries this step journaled)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from holon.actions.config import ActionConfig
from holon.actions.result import Line, RunRow, StepResult
from holon.controller.decide import target_of
from holon.controller.pass_report import PassReport
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent
from holon.spend import Spend

if TYPE_CHECKING:
    from holon.closure.handoff import Handoff
    from holon.serve.serve import Serve

_PHASE = re.compile(r" \((start|settle)\)(?=:)")
WHAT = 200  # characters of one decided/refused line's parts


def describe(
    serve: Serve, envelope: EventEnvelope | None, config: ActionConfig, *, notes: list[str]
) -> StepResult:
    reports = list(serve.reports)
    result = StepResult(
        exit_code=0,
        event=envelope.type if envelope is not None else "",
        subject=_subject(envelope) if envelope is not None else None,
        title=title_of(envelope) if envelope is not None else "",
        closures=serve.closures(),
        runs=runs_of(reports, serve),
        notes=list(notes),
    )
    for report in reports:
        decided, refused = lines_of(report)
        result.decided += decided
        result.refused += refused
    hooks: Any = serve.hooks
    result.problems += distinct_writes(getattr(hooks, "failed_writes", []))
    result.problems += [f"event {event_id} failed inside Holon" for event_id in serve.failed]
    chosen = result.closure_subject
    settled = getattr(hooks, "settled", {}).get(chosen) if chosen else None
    if settled is not None:
        result.handoff = settled.handoff
        result.comment_url = settled.comment_url or ""
    elif chosen is not None:
        result.handoff = offline_handoff(reports, chosen, result, workflow="holon")
    return result


def distinct_writes(failed: list[str]) -> list[str]:
    """The failed GitHub writes, each cause once: a token without a permission fails the start
    and every settle alike, and is one problem."""
    return list(dict.fromkeys(_PHASE.sub("", text) for text in failed))


def _subject(envelope: EventEnvelope) -> str | None:
    if envelope.subject is None:
        return None
    return target_of(envelope).subject()


def title_of(envelope: EventEnvelope) -> str:
    payload = envelope.payload if isinstance(envelope.payload, dict) else {}
    for key in ("issue", "pull_request"):
        item = payload.get(key)
        if isinstance(item, dict) and isinstance(item.get("title"), str):
            return str(item["title"])[:512]
    return ""


def runs_of(reports: list[PassReport], serve: Serve) -> list[RunRow]:
    """Every skill run the step's passes performed or ended, its latest status."""
    rows: dict[str, RunRow] = {}
    for report in reports:
        for intent in [*report.intents, *report.ended_runs]:
            if intent.type != "run_skill":
                continue
            record = serve.state.get("intent", intent.id)
            status = record.status if record is not None else "unknown"
            previous = rows.get(intent.id)
            rows[intent.id] = RunRow(
                intent=intent.id,
                skill=str(intent.args.get("skill") or ""),
                subject=intent.target.subject(),
                status=status,
                outcome=previous.outcome if previous else "",
                output=previous.output if previous else "",
                usage=previous.usage if previous else None,
            )
        for done in report.results:
            row = rows.get(done.intent_id)
            if row is None or done.type != "run_skill":
                continue
            rows[done.intent_id] = RunRow(
                intent=row.intent,
                skill=row.skill,
                subject=row.subject,
                status=row.status,
                outcome=done.run_outcome or row.outcome,
                output=done.run_output_path or row.output,
                # Every attempt spent: a retried run costs both.
                usage=_added(row.usage, done.usage),
            )
    return list(rows.values())


def _added(total: Spend | None, more: Spend | None) -> Spend | None:
    if more is None:
        return total
    return more if total is None else total + more


def _cut(text: object) -> str:
    value = str(text)
    return value if len(value) <= WHAT else value[: WHAT - 3] + "..."


def _intent_line(item: dict[str, Any]) -> str:
    args = item.get("args") if isinstance(item.get("args"), dict) else {}
    skill = args.get("skill") if isinstance(args, dict) else None
    what = f"{item.get('type')}" + (f" {skill}" if skill else "")
    return f"{what} on {item.get('target') or item.get('subject') or '?'}"


def lines_of(report: PassReport) -> tuple[list[Line], list[Line]]:
    """What a pass decided (each intent, or "no work" and why) and refused (each refused
    intent with its guard and reason; a duplicate or refused event)."""
    decided: list[Line] = []
    refused: list[Line] = []
    for entry in report.decisions:
        outcome = entry.get("outcome")
        why = _cut(entry.get("rationale") or "")
        subject = entry.get("subject") or "?"
        kind = str(entry.get("type") or "")
        if outcome == "decided":
            intents = [i for i in entry.get("intents") or [] if isinstance(i, dict)]
            for item in intents:
                decided.append(Line(_cut(_intent_line(item)), why, kind))
            if not intents and not entry.get("refused"):
                decided.append(Line(f"no work for {kind} on {subject}", why, kind))
        elif outcome in ("held", "continued"):
            # Work beyond intents_per_pass: held (not refused) for the next pass, then continued.
            note = " (held for the next pass)" if outcome == "held" else " (held work continued)"
            for item in entry.get("intents") or []:
                if isinstance(item, dict):
                    decided.append(Line(_cut(_intent_line(item) + note), why, kind))
        elif outcome in ("refused", "duplicate", "expired"):
            refused.append(Line(_cut(f"{entry.get('type')} on {subject} ({outcome})"), why))
        elif outcome == "paused":
            refused.append(Line(_cut(f"{entry.get('type')} on {subject} (kept)"), why))
        for item in entry.get("refused") or []:
            if not isinstance(item, dict):
                continue
            what = f"{item.get('type')} on {subject}"
            refused.append(Line(_cut(what), _cut(f"{item.get('guard')}: {item.get('reason')}")))
    return decided, refused


def offline_handoff(
    reports: list[PassReport], subject: str, result: StepResult, *, workflow: str
) -> Handoff | None:
    """The handoff the comment would carry, built from the closure when nothing was written on
    GitHub (a dry run, no token): outputs are never empty when there was work."""
    from holon.serve.github_hooks import (
        handoff_for,
        made_by,
        spend_limited,
        stop_handoff,
        stops_of,
        subject_handoff,
    )

    closure = result.closures.get(subject)
    if closure is None:
        return None
    last: tuple[PassReport, ActionIntent] | None = None
    stop: ActionIntent | None = None
    limited = False
    usage: Spend | None = None
    for run in result.runs:
        if run.subject == subject:
            usage = _added(usage, run.usage)
    for report in reports:
        for intent in [*report.intents, *report.ended_runs]:
            if intent.type == "run_skill" and intent.target.subject() == subject:
                last = (report, intent)
        stop = next((s for s in stops_of(report) if s.target.subject() == subject), stop)
        limited = limited or subject in spend_limited(report)
    if last is None:
        # A stop with nothing running is answered too (github_hooks.after_pass), and so is a
        # run a spend limit held back.
        if stop is not None:
            return stop_handoff(stop, closure, None, workflow)
        return subject_handoff(subject, closure, workflow, usage) if limited else None
    report, intent = last
    return handoff_for(intent, closure, made_by(report, intent), workflow, usage)


__all__ = ["describe", "lines_of", "offline_handoff", "runs_of", "title_of"]
