"""Fan-out's decide and settle in this process, with the reconcile and re-dispatch seams
replaced: a tick's decide reconciles through single mode's own code path (and defers what it
finds), re-activation happens in settle only, once per continuable run."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.actions import fanout, reactivate, reconcile
from holon.actions.config import ActionConfig
from holon.actions.reactivate import Reactivation
from holon.gateway.github import normalize
from holon.state.model import Record
from tests.actions.step_support import REPO, Step, payload

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _solve_missed(repo: Any) -> Any:
    issue = repo.add_issue("add() subtracts", user="octocat")
    repo.permissions["Codertocat"] = "write"  # the example's commenter
    missed = payload("issue_comment", "created")
    missed["comment"].update(body="/holon solve", id=9, author_association="OWNER")
    missed["comment"]["user"]["login"] = "octocat"
    missed["issue"]["number"] = issue.number
    missed["issue"].pop("pull_request", None)
    return normalize("issue_comment", missed, via="actions", received_at=NOW)


def test_a_ticks_decide_reconciles_through_single_mode_and_defers_what_it_found(
    github_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = github_server.state.repos[REPO]
    envelope = _solve_missed(repo)
    cursor = Record(
        kind="meta", key="reconcile_cursor", updated_at=NOW, writer="t", data={"at": "x"}
    )
    seen: list[str] = []

    def fake_reconcile(state: Any, client: Any, repo_name: str, **kw: Any) -> Any:
        seen.append(repo_name)
        return [envelope], cursor

    dispatched: list[Any] = []
    monkeypatch.setattr(reconcile, "reconcile", fake_reconcile)
    monkeypatch.setattr(reactivate, "dispatch_reactivations", lambda *a, **k: dispatched.append(a))
    step = Step(tmp_path, "schedule", {"schedule": "0 * * * *"}, server=github_server)
    env = step.environ(HOLON_MODE="decide")
    result = fanout.run_decide(env, ActionConfig.from_env(env), lambda: NOW)
    assert seen == [REPO]
    include = json.loads(result.extra_outputs["matrix"])["include"]
    assert len(include) == 1, (result.refused, result.decided, result.notes)
    (entry,) = include
    assert entry["skill"] == "github-issue-solve"
    assert any("reconciled 1 event" in note for note in result.notes)
    decided = step.runner_temp / "holon" / "decided" / "state.json"
    assert "meta:reconcile_cursor" in decided.read_text()
    assert dispatched == []  # decide never re-dispatches: its runs wait on their jobs


def test_re_activation_happens_in_settle_only_and_once(
    github_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = github_server.state.repos[REPO]
    envelope = _solve_missed(repo)
    monkeypatch.setattr(reconcile, "reconcile", lambda *a, **k: ([envelope], None))
    asked: list[str] = []
    sent: list[list[Reactivation]] = []
    real = reactivate.reactivations

    def continuable(closures: Any, state: Any, *, budget: int, now: datetime, **rest: Any) -> Any:
        # The settled run is made continuable here (a real one needs an agent that leaves
        # runnable work); what settle does with it is the real code.
        asked.append(",".join(sorted(closures)))
        items, records = real(closures, state, budget=budget, now=now, **rest)
        return [*items, Reactivation("issue:1", 1, "github-issue-solve")], records

    def dispatch(items: Any, scope: Any, *, workflow_file: str, ref: str) -> list[str]:
        sent.append(list(items))
        return [f"re-dispatched {item.subject}" for item in items]

    monkeypatch.setattr(reactivate, "reactivations", continuable)
    monkeypatch.setattr(reactivate, "dispatch_reactivations", dispatch)
    decide = Step(tmp_path / "decide", "schedule", {"schedule": "0 * * * *"}, server=github_server)
    env = decide.environ(HOLON_MODE="decide")
    result = fanout.run_decide(env, ActionConfig.from_env(env), lambda: NOW)
    matrix = result.extra_outputs["matrix"]
    assert (asked, sent) == ([], [])

    settle = Step(tmp_path / "settle", "schedule", {"schedule": "0 * * * *"}, server=github_server)
    env = settle.environ(
        HOLON_MODE="settle",
        HOLON_MATRIX=matrix,
        HOLON_DECIDED_DIR=str(decide.runner_temp / "holon" / "decided"),
    )
    result = fanout.run_settle(env, ActionConfig.from_env(env), lambda: NOW)
    assert asked == ["issue:1"]
    assert sent == [[Reactivation("issue:1", 1, "github-issue-solve")]]
    assert "re-dispatched issue:1" in result.notes
