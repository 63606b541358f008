"""`holon report`'s figures from journal entries and state records (pure): per skill and ISO
week, runs and their outcomes, closures, pull requests opened and what became of them, time to
first comment, model spend and spend per merged pull request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from holon.report.aggregate import DECIDER, Report, Row, build_report, iso_week
from holon.state.model import Record, ServeState

MON = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)  # ISO week 2026-W48
NEXT = MON + timedelta(days=7)  # 2026-W49


def _at(when: datetime, seconds: float = 0) -> str:
    return (when + timedelta(seconds=seconds)).isoformat()


def _event(ident: str, when: datetime, seconds: float = 0) -> dict[str, Any]:
    return {"id": ident, "at": _at(when, seconds), "type": "github.issue_comment.created"}


def _decision(ident: str, when: datetime, *intents: tuple[str, str, str | None]) -> dict[str, Any]:
    """`intents`: (intent id, skill, published skill or None)."""
    return {
        "id": f"dec:{ident}",
        "at": _at(when),
        "event_id": ident,
        "usage": None,
        "intents": [
            {
                "id": intent,
                "type": "run_skill",
                "target": "issue:1",
                "args": {"skill": skill, "inputs": {"skill": published} if published else {}},
            }
            for intent, skill, published in intents
        ],
    }


def _result(
    intent: str,
    when: datetime,
    *,
    attempt: int = 1,
    status: str = "succeeded",
    outcome: str | None = "success",
    usage: dict[str, Any] | None = None,
    opened: int | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": f"{intent}:{attempt}",
        "intent_id": intent,
        "type": "run_skill",
        "subject": "issue:1",
        "attempt": attempt,
        "status": status,
        "run_outcome": outcome,
        "usage": usage,
        "at": _at(when),
    }
    if opened is not None:
        entry["effect"] = {"effect": "publish", "pull_request_action": "created"}
        entry["output"] = {"number": opened, "url": f"https://github.com/o/r/pull/{opened}"}
    return entry


def _record(kind: Any, key: str, when: datetime, status: str = "live", **data: Any) -> Record:
    return Record(kind=kind, key=key, status=status, updated_at=when, writer="w", data=data)


def _row(report: Report, skill: str, week: str) -> Row:
    (found,) = [r for r in report.rows if (r.skill, r.week) == (skill, week)]
    return found


def _story() -> dict[str, Any]:
    """Week 48: issue 1 solved (two attempts, the first failed) and published as PR #5, merged;
    issue 2 solved and published as PR #6, closed; issue 3's run failed. Week 49: issue 4
    solved and published as PR #7 (never read: unknown), a model decider spent on a decision."""
    spend = {"input_tokens": 100, "output_tokens": 50, "cost_usd": 0.25, "unpriced_tokens": 0}
    unpriced = {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.0, "unpriced_tokens": 15}
    events = [
        _event("e1", MON),
        _event("e2", MON, 60),
        _event("e3", MON, 120),
        _event("e4", NEXT),
        {"id": "progress:a1", "at": _at(MON, 3), "progress": {"event_id": "e1", "skill": "solve"}},
        # A second comment for the same event does not move its first one.
        {"id": "progress:x", "at": _at(MON, 30), "progress": {"event_id": "e1", "skill": "solve"}},
        {"id": "progress:a2", "at": _at(MON, 65), "progress": {"event_id": "e2", "skill": "solve"}},
        {"id": "progress:a4", "at": _at(NEXT, 7), "progress": {"event_id": "e4", "skill": "solve"}},
        {"id": "error:replay:3", "at": _at(MON), "error": "line 3 is not JSON"},
        # An event Holon failed on is no skipped line (its own error, journaled apart).
        {"id": "failed:e3", "at": _at(MON), "error": "internal error"},
        {"id": "pr:5:merged", "at": _at(NEXT), "pr_merged": {"number": 5, "subject": "issue:1"}},
    ]
    decisions = [
        _decision("e1", MON, ("a1", "solve", None), ("p1", "github-publish", "solve")),
        _decision("e2", MON, ("a2", "solve", None), ("p2", "github-publish", "solve")),
        _decision("e3", MON, ("a3", "fix", None)),
        _decision("e4", NEXT, ("a4", "solve", None), ("p4", "github-publish", "solve")),
        {"id": "dec:tick", "at": _at(NEXT), "intents": [], "usage": spend},
    ]
    actions = [
        _result("a1", MON, status="failed", outcome="failure", usage=spend),
        _result("a1", MON, attempt=2, usage=spend),
        _result("p1", MON, opened=5),
        _result("a2", MON, usage=unpriced),
        _result("p2", MON, opened=6),
        _result("a3", MON, status="failed", outcome="failure"),
        _result("a4", NEXT, usage=spend),
        _result("p4", NEXT, opened=7),
        _result("p4", NEXT, opened=7),  # the same line twice (a merged journal): counted once
    ]
    state = ServeState()
    state.put(_record("meta", "pull:6", MON, "done", number=6, state="closed"))
    state.put(
        _record("closure", "issue:1", MON, closure_outcome="completed", deciding_items=["run:p1"])
    )
    state.put(_record("closure", "issue:3", MON, closure_outcome="failed", deciding_items=[]))
    state.put(_record("memory", "issue:3", MON, subject="issue:3", recent=[{"skill": "fix"}]))
    return {"events": events, "decisions": decisions, "actions": actions, "state": state}


def test_the_figures_per_skill_and_week() -> None:
    report = build_report(**_story())
    week48, week49 = iso_week(MON), iso_week(NEXT)
    assert (week48, week49) == ("2026-W48", "2026-W49")
    solve = _row(report, "solve", week48)
    assert (solve.runs, solve.run_outcomes) == (2, {"success": 2})  # publishing is no run
    assert solve.closures == {"completed": 1}
    assert (solve.prs_opened, solve.prs_merged, solve.prs_closed, solve.prs_unknown) == (2, 1, 1, 0)
    assert solve.first_comment is not None
    assert (solve.first_comment.count, solve.first_comment.median_seconds) == (2, 4.0)
    assert solve.first_comment.max_seconds == 5.0
    # Every attempt's spend counts, priced and unpriced apart.
    assert (solve.spend.tokens, solve.spend.cost_usd, solve.spend.unpriced_tokens) == (315, 0.5, 15)
    assert solve.usd_per_merged_pr == 0.5
    fix = _row(report, "fix", week48)
    assert (fix.runs, fix.run_outcomes, fix.closures) == (1, {"failure": 1}, {"failed": 1})
    assert fix.first_comment is None
    assert fix.usd_per_merged_pr is None
    later = _row(report, "solve", week49)
    assert (later.prs_opened, later.prs_unknown, later.spend.cost_usd) == (1, 1, 0.25)
    assert _row(report, DECIDER, week49).spend.cost_usd == 0.25
    (total_solve,) = [r for r in report.skills if r.skill == "solve"]
    assert (total_solve.runs, total_solve.prs_opened, total_solve.prs_merged) == (3, 3, 1)
    assert total_solve.usd_per_merged_pr == 0.75
    assert (report.total.runs, report.total.spend.cost_usd) == (4, 1.0)
    assert (report.events, report.skipped_lines, report.pulls_read) == (4, 1, True)


def test_since_leaves_out_what_happened_before() -> None:
    report = build_report(**_story(), since=NEXT)
    weeks = {(r.skill, r.week) for r in report.rows}
    assert weeks == {("solve", "2026-W49"), (DECIDER, "2026-W49")}
    assert (report.total.runs, report.total.prs_opened, report.events) == (1, 1, 1)
    assert report.since == NEXT.isoformat()


def test_entries_of_an_unexpected_shape_are_left_out_never_fatal() -> None:
    odd: list[dict[str, Any]] = [
        {"id": "x1", "type": "run_skill", "intent_id": 3, "at": "yesterday"},
        {"id": "x2", "type": "run_skill", "intent_id": "a9", "at": "not a time", "usage": "lots"},
        {"id": "x3", "type": "run_skill", "intent_id": "a9", "at": _at(MON), "usage": {"x": 1}},
        {"id": "x4", "status": "succeeded", "effect": "publish", "output": [1], "at": _at(MON)},
    ]
    weird: list[dict[str, Any]] = [
        {"id": "d", "intents": ["no", {"type": "run_skill", "args": "none"}], "usage": 5}
    ]
    events: list[dict[str, Any]] = [
        {"id": "p", "at": "soon", "progress": {"event_id": 1}},
        {"id": "e", "type": 3},
    ]
    report = build_report(events=events, decisions=weird, actions=odd, state=ServeState())
    assert [(r.skill, r.runs, r.spend.tokens) for r in report.rows] == [("(unknown)", 1, 0)]


def test_without_a_pull_request_read_their_state_is_unknown() -> None:
    story = _story()
    story["events"] = [e for e in story["events"] if "pr_merged" not in e]
    story["state"] = ServeState()
    report = build_report(**story)
    assert report.pulls_read is False
    assert (report.total.prs_opened, report.total.prs_unknown) == (3, 3)
    assert report.total.usd_per_merged_pr is None
