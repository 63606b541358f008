"""The duplicate guardrails through the controller (docs/policy.md, "Guardrails"): a skill already
running on a subject is not started again until that run settles, and github-review and
github-pr-fix run once per head sha (a failed run does not count as that run: the subject's
memory then holds back the automatic repeat, docs/architecture.md "Subject memory")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from holon.controller.facts import PullFacts
from holon.controller.loop import Controller
from holon.controller.parts import no_crash
from holon.executor.executor import build_executor
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from tests.controller.conftest import (
    REPO,
    Clock,
    actions,
    comment_event,
    decisions,
    make_controller,
)
from tests.gateway.conftest import example

NUMBER = example("pull_request_review", "submitted")["pull_request"]["number"]
SHA = example("pull_request_review", "submitted")["pull_request"]["head"]["sha"]
NEW_SHA = "b" * 40
HOLON_PR = PullFacts(
    approved=False, stale=False, head_sha=SHA, head_ref="holon/issue-1", same_repo=True
)


class Crash(Exception):
    pass


def _crash_mid_run(point: str) -> None:
    if point == "after_effect_before_journal":
        raise Crash(point)


def _left_running(ctl: Controller, env: EventEnvelope) -> None:
    """Handle `env` in a process that dies while its run is under way: the run stays inflight."""
    ctl.parts.crashpoint = _crash_mid_run
    with pytest.raises(Crash):
        ctl.handle(env)
    ctl.parts.crashpoint = no_crash
    assert [r.status for r in ctl.state.live("intent")] == ["inflight"]


def _review(review_id: int, sha: str = SHA, state: str = "changes_requested") -> EventEnvelope:
    payload = example("pull_request_review", "submitted")
    payload["review"].update(id=review_id, state=state)
    payload["pull_request"]["head"]["sha"] = sha
    return normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))


def _later(ctl: Controller, minutes: int) -> None:
    clock = ctl.clock
    assert isinstance(clock, Clock)
    clock.now += timedelta(minutes=minutes)


def _outcome(decision: dict[str, Any]) -> list[tuple[str, str]]:
    """What a decision did: the skills of its accepted runs, then its refusals."""
    runs = [("run", i["args"]["skill"]) for i in decision["intents"] if i["type"] == "run_skill"]
    return runs + [(r["guard"], r["reason"]) for r in decision["refused"]]


def test_a_skill_already_running_on_the_subject_is_refused_until_it_settles(
    tmp_path: Path,
) -> None:
    ctl = make_controller(tmp_path)
    _left_running(ctl, comment_event("/holon solve", comment_id=1))
    ctl.handle(comment_event("/holon solve", comment_id=2))
    refused = decisions(ctl)[-1]
    assert _outcome(refused) == [("duplicate", "github-issue-solve is already running on issue:1")]
    assert len(list(ctl.state.live("intent"))) == 1  # the refused run was never recorded
    assert actions(ctl) == []  # ... nor performed
    # The first run settles (recovery finishes it); a new one is then allowed.
    ctl.recover()
    assert [r.status for r in ctl.state.live("intent")] == ["succeeded"]
    ctl.handle(comment_event("/holon solve", comment_id=3))
    assert _outcome(decisions(ctl)[-1]) == [("run", "github-issue-solve")]
    assert [a["status"] for a in actions(ctl) if a["type"] == "run_skill"] == ["succeeded"] * 2


def test_a_running_skill_blocks_neither_another_skill_nor_another_subject(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    _left_running(ctl, comment_event("/holon fix", number=NUMBER, comment_id=1, pr=True))
    ctl.handle(comment_event("/holon review", number=NUMBER, comment_id=2, pr=True))
    ctl.handle(comment_event("/holon fix", number=NUMBER + 1, comment_id=3, pr=True))
    assert [_outcome(d) for d in decisions(ctl)[1:]] == [
        [("run", "github-review")],
        [("run", "github-pr-fix")],
    ]


def test_a_per_sha_skill_runs_again_only_for_a_new_head_sha(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path, pulls={(REPO, NUMBER): HOLON_PR})
    ctl.handle(_review(1))
    _later(ctl, 11)  # past the 10m cooldown: only the sha guard can refuse now
    ctl.handle(_review(2))
    _later(ctl, 11)
    ctl.handle(_review(3, sha=NEW_SHA))
    assert [_outcome(d) for d in decisions(ctl)] == [
        [("run", "github-pr-fix")],
        [("duplicate", f"github-pr-fix already ran on pull_request:{NUMBER} for {SHA[:12]}")],
        [("run", "github-pr-fix")],
    ]


def test_a_failed_per_sha_run_is_not_repeated_blindly_but_a_command_retries(
    tmp_path: Path,
) -> None:
    ctl = make_controller(tmp_path, pulls={(REPO, NUMBER): HOLON_PR})
    # No agent configured outside a dry run: the run fails (both attempts).
    ctl.parts.executor = build_executor(dry_run=False, clock=ctl.clock, run_skill=None)
    ctl.handle(_review(1))
    assert {r.status for r in ctl.state.live("intent")} == {"failed"}
    _later(ctl, 11)
    ctl.handle(_review(2))
    assert _outcome(decisions(ctl)[-1]) == [
        (
            "failed_before",
            f"github-pr-fix failed twice on {SHA[:12]}; a new commit or a /holon command retries",
        )
    ]
    # A failed run is not the run the sha guard counts: a person's command runs it again.
    ctl.handle(comment_event("/holon fix", number=NUMBER, comment_id=7, pr=True))
    assert _outcome(decisions(ctl)[-1]) == [("run", "github-pr-fix")]
