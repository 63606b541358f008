"""`single.run_step` in this process, with the other modules' seams replaced: a tick handles
what reconciliation found before the tick itself and keeps its cursor; continuable subjects are
handed to the re-dispatch."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.actions import reactivate, reconcile
from holon.actions.config import ActionConfig
from holon.actions.single import run_step
from holon.gateway.github import normalize
from holon.state.model import Record
from tests.actions.step_support import REPO, Step, payload

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def test_a_tick_handles_the_missed_events_first_and_keeps_the_cursor(
    github_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    repo.permissions["Codertocat"] = "write"
    missed = payload("issue_comment", "created")
    missed["comment"].update(body="/holon help", id=9)
    missed["issue"]["number"] = 1
    envelope = normalize("issue_comment", missed, via="actions", received_at=NOW)
    cursor = Record(
        kind="meta", key="reconcile_cursor", updated_at=NOW, writer="t", data={"at": "x"}
    )
    seen: list[str] = []

    def fake_reconcile(state: Any, client: Any, repo_name: str, **kw: Any) -> Any:
        seen.append(repo_name)
        return [envelope], cursor

    monkeypatch.setattr(reconcile, "reconcile", fake_reconcile)
    step = Step(tmp_path, "schedule", {"schedule": "0 * * * *"}, server=github_server)
    env = step.environ()
    said: list[str] = []
    result = run_step(env, ActionConfig.from_env(env), clock=lambda: NOW, say=said.append)
    assert seen == [REPO]
    (comment,) = repo.comments.values()
    assert "skill=reply.usage" in comment.body
    state = json.loads((step.state_dir / "state.json").read_text())
    assert "meta:reconcile_cursor" in json.dumps(state)
    assert result.exit_code == 0
    assert any("reconciled 1 event" in note for note in result.notes)


def test_continuable_subjects_go_to_the_redispatch(
    github_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def fake_reactivations(closures: Any, state: Any, *, budget: int, **kw: Any) -> Any:
        calls.append({"budget": budget, "mention": kw["mention"], "writer": bool(kw["writer"])})
        return [reactivate.Reactivation("issue:1", 1)], []

    def fake_dispatch(items: Any, scope: Any, *, workflow_file: str, ref: str) -> list[str]:
        calls.append({"items": items, "workflow_file": workflow_file, "ref": ref})
        return ["re-dispatched issue:1 (generation 1)"]

    monkeypatch.setattr(reactivate, "reactivations", fake_reactivations)
    monkeypatch.setattr(reactivate, "dispatch_reactivations", fake_dispatch)
    step = Step(tmp_path, "workflow_dispatch", payload("workflow_dispatch"), server=github_server)
    env = step.environ(HOLON_REACTIVATION_BUDGET="2")
    result = run_step(env, ActionConfig.from_env(env), clock=lambda: NOW, say=lambda _: None)
    assert calls == [
        {"budget": 2, "mention": "holon", "writer": True},
        {
            "items": [reactivate.Reactivation("issue:1", 1)],
            "workflow_file": "holon.yml",
            "ref": "refs/heads/main",
        },
    ]
    assert "re-dispatched issue:1 (generation 1)" in result.notes


def test_a_tick_that_failed_an_event_keeps_the_old_cursor(
    github_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cursor is put only once every event of its window was handled: a failed pass leaves
    the old one, so the next tick reads the window again. Reconcile is told Holon's login (its
    own comments are no commands) and the step's warnings (shown and summarized)."""
    from holon.controller import passes

    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    missed = payload("issue_comment", "created")
    missed["comment"].update(body="/holon help", id=9)
    missed["issue"]["number"] = 1
    envelope = normalize("issue_comment", missed, via="actions", received_at=NOW)
    cursor = Record(
        kind="meta", key="reconcile_cursor", updated_at=NOW, writer="t", data={"at": "x"}
    )
    given: dict[str, Any] = {}

    def fake_reconcile(state: Any, client: Any, repo_name: str, **kw: Any) -> Any:
        given.update(kw)
        kw["warn"]("reconcile: reviews not read: 403")
        return [envelope], cursor

    def broken(p: Any, env: Any, suffix: str = "") -> None:
        raise RuntimeError("a bug inside Holon")

    monkeypatch.setattr(reconcile, "reconcile", fake_reconcile)
    monkeypatch.setattr(passes, "decide_and_act", broken)
    step = Step(tmp_path, "schedule", {"schedule": "0 * * * *"}, server=github_server)
    env = step.environ()
    said: list[str] = []
    result = run_step(env, ActionConfig.from_env(env), clock=lambda: NOW, say=said.append)
    assert given["login"] == "github-actions[bot]"
    assert given["mention"] == "holon"
    assert result.exit_code == 1
    state = json.loads((step.state_dir / "state.json").read_text())
    assert "reconcile_cursor" not in json.dumps(state)
    assert "::warning::reconcile: reviews not read: 403" in said
    assert "warning: reconcile: reviews not read: 403" in result.notes
