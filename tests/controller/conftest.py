"""Shared parts for driving the controller in memory: a settable clock, a controller over
in-memory facts with a dry-run executor, comment events from GitHub's real examples."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from holon.controller.decide import PolicyDecider
from holon.controller.facts import StaticFacts
from holon.controller.loop import Controller, Journals
from holon.controller.policy import load_policy, parse_policy
from holon.executor.executor import build_executor
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import ServeState
from tests.gateway.conftest import example

REPO = "Codertocat/Hello-World"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def make_controller(tmp_path: Path, policy_text: str | None = None, **facts: Any) -> Controller:
    """A controller with a dry-run executor; `facts` configure its StaticFacts."""
    clock = Clock()
    policy = parse_policy(policy_text) if policy_text else load_policy(None)
    static = StaticFacts(**facts)
    journals = Journals(*(Journal(tmp_path / f"{n}.ndjson", fsync=False) for n in ("e", "d", "a")))
    return Controller(
        state=ServeState(),
        journals=journals,
        executor=build_executor(dry_run=True, clock=clock, run_skill=None),
        decider=PolicyDecider(policy, static),
        facts=static,
        policy=policy,
        catalog=default_catalog(),
        clock=clock,
        writer="test",
        checkpoint=lambda: None,
        idempotent_runs=True,
    )


def comment_event(
    body: str, *, number: int = 1, comment_id: int = 1, association: str = "OWNER", pr: bool = False
) -> EventEnvelope:
    payload = example("issue_comment", "created")
    payload["issue"]["number"] = number
    payload["comment"].update(id=comment_id, body=body, author_association=association)
    if pr:
        payload["issue"]["pull_request"] = {"url": "x"}
    return normalize("issue_comment", payload, via="replay", received_at=datetime.now(UTC))


def decisions(ctl: Controller) -> list[dict[str, Any]]:
    return list(ctl.journals.decisions.read())


def actions(ctl: Controller) -> list[dict[str, Any]]:
    return list(ctl.journals.actions.read())
