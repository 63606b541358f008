"""2, 4 and 8 `holon action` runs racing over one restored state (`scenario.py`): each is a real
process of its own, with its own state, against the one loopback GitHub, the replay engine and
the local runtime. Their artifacts are then restored by the next run, a scheduled tick, the way
every run restores state, and it reconciles every comment made since the cursor.

What must hold, whatever the interleaving:
- nothing lost: every dedupe mark, intent and closure any racing run saved is in the state the
  tick restored, at least as far along (a settled intent never back to inflight); none inflight;
- every event handled once: each delivered event has one decision in the merged journals, and
  every run that decided it decided the same intents; the tick decides none of them again and
  writes nothing to GitHub;
- one Holon comment per subject, one pull request and one branch per solved issue, one reply
  to the review thread and one pr-fix commit, however many runs got the same event;
- the handoff truthful: each subject's comment says the outcome its closure records, and the
  solved issues' comments link their own pull request.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from holon.actions import coverage
from holon.gateway.envelope import envelope_id
from holon.state.model import ServeState, greater
from tests.races.scenario import (
    REVIEW,
    THREAD,
    WRITES,
    Race,
    Steps,
    dump,
    exported_state,
    journal_entries,
    live_state,
    race,
    tick,
)
from tests.support.actions_env import REPO
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.state import Repo

KEPT = ("dedupe", "intent", "closure", "wait")
OUTCOME = {"completed": "finished", "failed": "failed"}


def _writes(server: LoopbackGitHub) -> dict[str, int]:
    return {operation: server.count(operation) for operation in WRITES}


def _dedupe_key(kind: str, ident: int) -> str:
    event = "pull_request_review.submitted" if kind == "review" else "issue_comment.created"
    return f"github:{REPO}:{event}:{ident}"


def _holon_pulls(repo: Repo) -> dict[str, list[int]]:
    found: dict[str, list[int]] = defaultdict(list)
    for issue in repo.issues.values():
        if issue.pull is not None and issue.pull.head.startswith("holon/"):
            found[issue.pull.head].append(issue.number)
    return found


@pytest.mark.parametrize("n", [2, 4, 8])
def test_racing_runs_lose_nothing_and_do_everything_once(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path, n: int
) -> None:
    result = race(steps, github_server, n, tmp_path)
    repo = result.seed.repo
    for done in result.results:
        assert done.returncode == 0, dump(result)
    writes = _writes(github_server)
    tick(steps, result)
    assert result.tick is not None
    assert result.tick_result is not None
    assert result.tick_result.returncode == 0, dump(result)
    why = dump(result)

    final = live_state(result.tick)
    # Every racing run restored the seed's artifact; the tick every racing run's, and not the
    # seed's, which they all held.
    assert coverage.held(final) == set(repo.artifacts), why
    assert github_server.count("actions/download-artifact") == 2 * n, why
    _nothing_lost(result, final, why)
    _each_event_decided_once(result, why)
    # The tick found every racing event handled: no new run, no write on GitHub.
    assert json.loads(result.tick.outputs()["runs"]) == [], why
    assert _writes(github_server) == writes, why
    assert "reconciled" not in result.tick.summary(), why
    _one_effect_per_subject(result, repo, why)
    _handoffs_truthful(result, repo, final, why)


def _nothing_lost(result: Race, final: ServeState, why: str) -> None:
    for step in [result.seed, *result.steps]:
        for rid, record in exported_state(step).records.items():
            if record.kind not in KEPT:
                continue
            kept = final.records.get(rid)
            assert kept is not None, f"{rid} of {step.name} was lost\n{why}"
            assert greater(kept, record) == kept, f"{rid} went back: {kept} < {record}"
    inflight = [r.key for r in final.live("intent") if r.status == "inflight"]
    assert inflight == [], why


def _each_event_decided_once(result: Race, why: str) -> None:
    assert result.tick is not None
    merged: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, entry in journal_entries(result.tick.state_dir):
        merged[name].append(entry)
    ids = [e["id"] for entries in merged.values() for e in entries]
    assert len(ids) == len(set(ids)), "a journal entry is there twice"
    decided: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in merged["decisions"]:
        decided[str(entry.get("event_id"))].append(entry)
    by_run: dict[str, set[str]] = defaultdict(set)  # event id: the intents each run decided
    for step in result.steps:
        for name, entry in journal_entries(step.runner_temp / "holon" / "upload"):
            if name == "decisions":
                intents = json.dumps(sorted(i["id"] for i in entry.get("intents", [])))
                by_run[str(entry.get("event_id"))].add(intents)
    for delivery in {(d.kind, d.ident) for d in result.deliveries}:
        event = envelope_id(_dedupe_key(*delivery))
        (decision,) = decided[event] or [None]
        assert decision is not None, f"{delivery} was never decided\n{why}"
        assert decision["outcome"] == "decided", decision
        assert len(by_run[event]) == 1, f"runs decided {delivery} differently: {by_run[event]}"


def _one_effect_per_subject(result: Race, repo: Repo, why: str) -> None:
    assert result.tick is not None
    solved = sorted({d.number for d in result.deliveries if d.kind == "solve"} | {1})
    reviewed = any(d.kind == "review" for d in result.deliveries)
    for number in [*solved, *([result.pull] if reviewed else [])]:
        comments = result.tick.holon_comments(number)
        assert len(comments) == 1, f"#{number}: {len(comments)} Holon comments\n{why}"
    pulls = _holon_pulls(repo)
    assert pulls == {f"holon/issue-{i}": [pulls[f"holon/issue-{i}"][0]] for i in solved}, why
    branches = sorted(r for r in repo.refs if r.startswith("heads/holon/"))
    assert branches == sorted(f"heads/holon/issue-{i}" for i in solved), why
    pull = repo.issue(result.pull).pull
    assert pull is not None
    replies = [c for c in pull.review_comments if c.get("in_reply_to_id") == THREAD]
    assert len(replies) == (1 if reviewed else 0), why
    # One pr-fix commit on the seed's head, however many runs got the change request.
    head = repo.objects[pull.head_sha]
    seed_head = repo.refs["heads/main"]
    depth = 0
    sha = pull.head_sha
    while sha != seed_head and repo.objects[sha]["parents"]:
        depth += 1
        sha = repo.objects[sha]["parents"][0]
    assert depth == (2 if reviewed else 1), (depth, head, why)
    assert all(r["id"] == REVIEW for r in pull.reviews)


def _handoffs_truthful(result: Race, repo: Repo, final: ServeState, why: str) -> None:
    assert result.tick is not None
    pulls = _holon_pulls(repo)
    subjects = {f"issue:{d.number}" for d in result.deliveries if d.kind == "solve"}
    if any(d.kind == "review" for d in result.deliveries):
        subjects.add(f"pull_request:{result.pull}")
    for subject in sorted(subjects):
        closure = final.get("closure", subject)
        assert closure is not None, f"{subject}: no closure\n{why}"
        outcome = str(closure.data["closure_outcome"])
        kind, _, number = subject.partition(":")
        (comment,) = result.tick.holon_comments(int(number))
        said = f"**Outcome:** `{OUTCOME.get(outcome, outcome)}`"
        assert said in comment, f"{subject}: {outcome} but the comment says\n{comment}\n{why}"
        assert outcome == "completed", f"{subject}: {outcome}\n{why}"
        if kind == "issue":
            (own,) = pulls[f"holon/issue-{number}"]
            assert f"pull request \\#{own}" in comment, comment
