"""The figures of `holon report`, per skill and per ISO week. Pure: journal entries and state
records in, a `Report` out (docs/report.md says what each figure counts).

The journals are outside input (a restored artifact): an entry of an unexpected shape is left
out of the figures, never fatal; each journal's entries count once per id.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from holon.spend import Spend
from holon.state.model import ServeState

PUBLISH = "github-publish"  # publishing ends the run it publishes: its figures are that skill's
DECIDER = "(decider)"  # the row of a model decider's own spend
UNKNOWN_SKILL = "(unknown)"
ALL_WEEKS = "all"
ALL_SKILLS = "all"
PullState = Literal["merged", "closed", "open", "unknown"]


class SpendFigures(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    tokens: int = 0
    cost_usd: float = Field(default=0.0, description="Priced tokens only.")
    unpriced_tokens: int = Field(default=0, description="Tokens of a model with no known price.")


class Latency(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int
    median_seconds: float
    max_seconds: float


class Row(BaseModel):
    """One skill in one ISO week (`week` "all": every week; `skill` "all": every skill)."""

    model_config = ConfigDict(extra="forbid")

    skill: str
    week: str
    runs: int = Field(default=0, description="Skill runs ended (publishing not counted).")
    run_outcomes: dict[str, int] = Field(default_factory=dict)
    closures: dict[str, int] = Field(
        default_factory=dict, description="Current closures of subjects by closure outcome."
    )
    prs_opened: int = 0
    prs_merged: int = 0
    prs_closed: int = Field(default=0, description="Closed without merging.")
    prs_open: int = Field(default=0, description="Still open when last read.")
    prs_unknown: int = Field(default=0, description="Never read from GitHub (offline).")
    first_comment: Latency | None = Field(
        default=None, description="Event received to Holon's first comment on its subject."
    )
    spend: SpendFigures = Field(default_factory=SpendFigures)
    usd_per_merged_pr: float | None = Field(
        default=None, description="cost_usd / prs_merged; None without a merged PR."
    )


class Report(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    since: str | None = None
    events: int = Field(default=0, description="Events journaled (received or made by Holon).")
    skipped_lines: int = Field(
        default=0, description="Broken lines and deliveries the serve journaled as skipped."
    )
    dropped_entries: int = Field(
        default=0, description="Journal entries a segment bound deleted: missing from figures."
    )
    pulls_read: bool = Field(
        default=False, description="Whether any pull request was read from GitHub on a tick."
    )
    rows: list[Row] = Field(default_factory=list, description="Per skill and ISO week.")
    skills: list[Row] = Field(default_factory=list, description="Per skill, every week.")
    total: Row = Field(default_factory=lambda: Row(skill=ALL_SKILLS, week=ALL_WEEKS))


def iso_week(at: datetime) -> str:
    year, week, _ = at.astimezone(UTC).isocalendar()
    return f"{year}-W{week:02d}"


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        found = datetime.fromisoformat(value)
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


def _unique(entries: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    seen: set[str] = set()
    found = []
    for entry in entries:
        ident = entry.get("id")
        if isinstance(ident, str) and ident not in seen:
            seen.add(ident)
            found.append(entry)
    return found


def _spend(value: object) -> Spend | None:
    if not isinstance(value, dict):
        return None
    try:
        return Spend.model_validate(value)
    except ValidationError:
        return None


@dataclass
class _Cell:
    runs: int = 0
    run_outcomes: dict[str, int] = field(default_factory=dict)
    closures: dict[str, int] = field(default_factory=dict)
    pulls: dict[PullState, int] = field(default_factory=dict)
    opened: int = 0
    latencies: list[float] = field(default_factory=list)
    spend: Spend = field(default_factory=Spend)

    def add(self, other: _Cell) -> None:
        self.runs += other.runs
        _merge_counts(self.run_outcomes, other.run_outcomes)
        _merge_counts(self.closures, other.closures)
        for state, count in other.pulls.items():
            self.pulls[state] = self.pulls.get(state, 0) + count
        self.opened += other.opened
        self.latencies += other.latencies
        self.spend = self.spend + other.spend

    def row(self, skill: str, week: str) -> Row:
        spend = self.spend
        merged = self.pulls.get("merged", 0)
        latency = None
        if self.latencies:
            latency = Latency(
                count=len(self.latencies),
                median_seconds=round(statistics.median(self.latencies), 3),
                max_seconds=round(max(self.latencies), 3),
            )
        return Row(
            skill=skill,
            week=week,
            runs=self.runs,
            run_outcomes=dict(sorted(self.run_outcomes.items())),
            closures=dict(sorted(self.closures.items())),
            prs_opened=self.opened,
            prs_merged=merged,
            prs_closed=self.pulls.get("closed", 0),
            prs_open=self.pulls.get("open", 0),
            prs_unknown=self.pulls.get("unknown", 0),
            first_comment=latency,
            spend=SpendFigures(
                input_tokens=spend.input_tokens,
                output_tokens=spend.output_tokens,
                tokens=spend.tokens,
                cost_usd=round(spend.cost_usd, 6),
                unpriced_tokens=spend.unpriced_tokens,
            ),
            usd_per_merged_pr=round(spend.cost_usd / merged, 6) if merged else None,
        )


def _merge_counts(into: dict[str, int], other: Mapping[str, int]) -> None:
    for key, count in other.items():
        into[key] = into.get(key, 0) + count


@dataclass(frozen=True)
class Intents:
    """Each run_skill intent's skill as its figures count it, and which intents publish: a
    publishing's figures are the published skill's (it is that run's last step)."""

    skills: dict[str, str]
    publishing: frozenset[str]

    def skill(self, intent: object) -> str:
        return self.skills.get(intent, UNKNOWN_SKILL) if isinstance(intent, str) else UNKNOWN_SKILL


def intents_of(decisions: Iterable[Mapping[str, Any]], state: ServeState) -> Intents:
    """From the decisions journal (complete), else the state's intent records."""
    found: dict[str, str] = {}
    publishing: set[str] = set()
    continues: dict[str, str] = {}
    for record in state.live("intent"):
        skill, before = record.data.get("skill"), record.data.get("continues")
        if isinstance(skill, str) and skill:
            found[record.key] = skill
        if skill == PUBLISH:
            publishing.add(record.key)
            if isinstance(before, str):
                continues[record.key] = before
    for entry in decisions:
        for intent in entry.get("intents") or []:
            if not isinstance(intent, dict) or intent.get("type") != "run_skill":
                continue
            args = intent.get("args")
            if not isinstance(args, dict):
                continue
            skill, inputs, ident = args.get("skill"), args.get("inputs"), intent.get("id")
            if not isinstance(ident, str) or not isinstance(skill, str) or not skill:
                continue
            if skill == PUBLISH:
                publishing.add(ident)
                published = inputs.get("skill") if isinstance(inputs, dict) else None
                skill = published if isinstance(published, str) and published else skill
            found[ident] = skill
    for ident, before in continues.items():
        if found.get(ident) == PUBLISH and before in found:
            found[ident] = found[before]
    return Intents(found, frozenset(publishing))


def _pull_states(events: Iterable[Mapping[str, Any]], state: ServeState) -> dict[int, PullState]:
    found: dict[int, PullState] = {}
    for record in state.live("meta"):
        number = record.data.get("number")
        if not record.key.startswith("pull:") or not isinstance(number, int):
            continue
        seen = record.data.get("state")
        if seen in ("merged", "closed", "open"):
            found[number] = seen
    for entry in events:  # the journal is the complete record (the state may be pruned)
        ends: tuple[PullState, ...] = ("merged", "closed")
        for ended in ends:
            what = entry.get(f"pr_{ended}")
            if isinstance(what, dict) and isinstance(what.get("number"), int):
                found[what["number"]] = ended
    return found


@dataclass
class _Table:
    since: datetime | None
    cells: dict[tuple[str, str], _Cell] = field(default_factory=dict)

    def cell(self, skill: str, at: datetime | None) -> _Cell | None:
        if at is None or (self.since is not None and at < self.since):
            return None
        return self.cells.setdefault((skill, iso_week(at)), _Cell())


def build_report(
    *,
    events: Iterable[Mapping[str, Any]],
    decisions: Iterable[Mapping[str, Any]],
    actions: Iterable[Mapping[str, Any]],
    state: ServeState,
    since: datetime | None = None,
    dropped: int = 0,
) -> Report:
    events, decisions, actions = _unique(events), _unique(decisions), _unique(actions)
    table = _Table(since)
    intents = intents_of(decisions, state)
    report = Report(since=since.isoformat() if since else None, dropped_entries=dropped)
    _count_events(report, events, table)
    _count_runs(actions, intents, table)
    _count_pulls(actions, events, state, intents, table)
    _count_closures(state, intents, table)
    _count_decider_spend(decisions, table)
    report.pulls_read = any(r.key.startswith("pull:") for r in state.live("meta")) or any(
        "pr_merged" in e or "pr_closed" in e for e in events
    )
    per_skill: dict[str, _Cell] = {}
    total = _Cell()
    for (skill, week), cell in sorted(table.cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        report.rows.append(cell.row(skill, week))
        per_skill.setdefault(skill, _Cell()).add(cell)
        total.add(cell)
    report.skills = [per_skill[skill].row(skill, ALL_WEEKS) for skill in sorted(per_skill)]
    report.total = total.row(ALL_SKILLS, ALL_WEEKS)
    return report


def _count_events(report: Report, events: list[Mapping[str, Any]], table: _Table) -> None:
    received: dict[str, datetime] = {}
    firsts: dict[str, tuple[datetime, str]] = {}
    for entry in events:
        at = parse_time(entry.get("at"))
        if str(entry.get("id")).startswith("error:") and "type" not in entry:
            report.skipped_lines += 1  # a broken line or delivery, journaled and skipped
        elif isinstance(entry.get("type"), str) and at is not None:
            if table.since is None or at >= table.since:
                report.events += 1
            received.setdefault(str(entry["id"]), at)
        progress = entry.get("progress")
        if isinstance(progress, dict) and at is not None:
            event_id, skill = progress.get("event_id"), progress.get("skill")
            if isinstance(event_id, str):
                name = skill if isinstance(skill, str) and skill else UNKNOWN_SKILL
                if event_id not in firsts or at < firsts[event_id][0]:
                    firsts[event_id] = (at, name)
    for event_id, (at, skill) in firsts.items():
        start = received.get(event_id)
        cell = table.cell(skill, start)
        if start is not None and cell is not None:
            cell.latencies.append(max(0.0, (at - start).total_seconds()))


def _count_runs(actions: list[Mapping[str, Any]], intents: Intents, table: _Table) -> None:
    last: dict[str, tuple[datetime, Mapping[str, Any]]] = {}
    for entry in actions:
        if entry.get("type") != "run_skill" or entry.get("dry_run") is True:
            continue
        intent, at = entry.get("intent_id"), parse_time(entry.get("at"))
        if not isinstance(intent, str) or at is None:
            continue
        spent = _spend(entry.get("usage"))
        cell = table.cell(intents.skill(intent), at) if spent is not None else None
        if spent is not None and cell is not None:
            cell.spend = cell.spend + spent  # every attempt spent what it spent
        before = last.get(intent)
        if before is None or before[0] <= at:
            last[intent] = (at, entry)
    for intent, (at, entry) in last.items():
        if intent in intents.publishing:
            continue
        cell = table.cell(intents.skill(intent), at)
        if cell is None:
            continue
        cell.runs += 1
        outcome = entry.get("run_outcome") or entry.get("status")
        key = outcome if isinstance(outcome, str) else "unknown"
        cell.run_outcomes[key] = cell.run_outcomes.get(key, 0) + 1


def _count_pulls(
    actions: list[Mapping[str, Any]],
    events: list[Mapping[str, Any]],
    state: ServeState,
    intents: Intents,
    table: _Table,
) -> None:
    states = _pull_states(events, state)
    opened: set[int] = set()
    for entry in sorted(actions, key=lambda e: str(e.get("at"))):
        effect, output = entry.get("effect"), entry.get("output")
        if entry.get("status") != "succeeded" or entry.get("dry_run") is True:
            continue
        if not isinstance(effect, dict) or effect.get("pull_request_action") != "created":
            continue
        number = output.get("number") if isinstance(output, dict) else None
        if not isinstance(number, int) or number in opened:
            continue
        opened.add(number)
        cell = table.cell(intents.skill(entry.get("intent_id")), parse_time(entry.get("at")))
        if cell is None:
            continue
        cell.opened += 1
        seen = states.get(number, "unknown")
        cell.pulls[seen] = cell.pulls.get(seen, 0) + 1


def _closure_skill(
    data: Mapping[str, Any], memory: Mapping[str, Any] | None, intents: Intents
) -> str:
    for item in data.get("deciding_items") or []:
        if isinstance(item, str) and item.startswith("run:"):
            skill = intents.skills.get(item.removeprefix("run:"))
            if skill:
                return skill
    recent = memory.get("recent") if memory else None
    if isinstance(recent, list):
        for attempt in reversed(recent):
            skill = attempt.get("skill") if isinstance(attempt, dict) else None
            if isinstance(skill, str) and skill and skill != PUBLISH:
                return skill
    return UNKNOWN_SKILL


def _count_closures(state: ServeState, intents: Intents, table: _Table) -> None:
    for record in state.live("closure"):
        memory = state.get("memory", record.key)
        skill = _closure_skill(record.data, memory.data if memory else None, intents)
        outcome = record.data.get("closure_outcome")
        cell = table.cell(skill, record.updated_at) if isinstance(outcome, str) else None
        if cell is None or not isinstance(outcome, str):
            continue
        cell.closures[outcome] = cell.closures.get(outcome, 0) + 1


def _count_decider_spend(decisions: list[Mapping[str, Any]], table: _Table) -> None:
    for entry in decisions:
        spent = _spend(entry.get("usage"))
        cell = table.cell(DECIDER, parse_time(entry.get("at"))) if spent is not None else None
        if spent is not None and cell is not None:
            cell.spend = cell.spend + spent


__all__ = [
    "ALL_SKILLS",
    "ALL_WEEKS",
    "DECIDER",
    "Intents",
    "Latency",
    "Report",
    "Row",
    "SpendFigures",
    "build_report",
    "intents_of",
    "iso_week",
    "parse_time",
]
