"""Shared parts for the executor tests: a fixed clock, valid intents of every type, a recording
handler, and a skill-run handler over a real workspace with the `local` runtime."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from holon.executor.handlers import RunSkillHandler
from holon.executor.result import ActionResult
from holon.intent import ActionIntent, Target, make_intent
from holon.skills.catalog import default_catalog

AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
REPO = "Codertocat/Hello-World"
SKILL = "github-issue-solve"

# For every intent type: arguments a decider might propose, and the full arguments the
# validated intent carries (defaults filled in), which is what an effect names.
ARGS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "run_skill": (
        {"skill": SKILL, "inputs": {"issue": "1"}},
        {"skill": SKILL, "inputs": {"issue": "1"}, "head_sha": None, "head_repo": None},
    ),
    "comment": ({"body": "hello"}, {"body": "hello", "kind": "note"}),
    "label": ({"label": "bug"}, {"label": "bug"}),
    "unlabel": ({"label": "bug"}, {"label": "bug"}),
    "request_review": ({"reviewers": ["octocat"]}, {"reviewers": ["octocat"]}),
    "merge": (
        {"sha": "a" * 40, "base": "main"},
        {"sha": "a" * 40, "method": "squash", "base": "main"},
    ),
    "close_issue": ({}, {"reason": "completed"}),
    "dispatch": ({"reason": "later"}, {"reason": "later", "after_seconds": 0.0}),
    "wait": (
        {"on": "operator", "reason": "asked"},
        {
            "on": "operator",
            "until": None,
            "condition": None,
            "question": None,
            "reason": "asked",
            "task_id": None,
            "interruption": None,
            "actor": None,
        },
    ),
    "noop": ({}, {}),
}


def clock() -> datetime:
    return AT


def intent(type_: str, args: dict[str, Any] | None = None, event_key: str = "k") -> ActionIntent:
    """A validated intent of `type_` on issue 1 (its ARGS unless `args` are given)."""
    return make_intent(
        type_=type_,
        target=Target(repo=REPO, kind="issue", id="1"),
        args=ARGS[type_][0] if args is None else args,
        reason="test",
        decider="test",
        event_key=event_key,
        event_id="evt_1",
        at=AT,
        skills=default_catalog().names(),
    )


class Recording:
    """A handler that records its calls and succeeds."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        self.calls.append((intent.id, attempt))
        return ActionResult(
            id=f"{intent.id}:{attempt}",
            intent_id=intent.id,
            type=intent.type,
            subject=intent.target.subject(),
            attempt=attempt,
            status="succeeded",
            at=AT,
        )


def run_skill_handler(tmp_path: Path, agent: list[str]) -> RunSkillHandler:
    """A skill-run handler over a small workspace, running `agent` with the local runtime."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "README.md").write_text("hello\n")
    return RunSkillHandler(
        workspace=workspace,
        output_root=tmp_path / "runs",
        clock=clock,
        runtime="local",
        agent=agent,
        image=None,
        describe=lambda skill: f"the goal of {skill}",
    )
