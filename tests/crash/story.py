"""The solve story of the Action (`/holon solve` on an issue: a progress comment, the replayed
agent's fix, a pull request on holon/issue-1, the comment settled) with a SIGKILL at one named
write point (holon/crashpoints.py), and the checks every restart must pass afterwards."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from holon.crashpoints import CRASH_ENV, TRACE_ENV
from holon.state.journal import Journal
from holon.state.store import StateStore
from tests.support.actions_env import ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub

SUBJECT = "issue:1"
BRANCH = "heads/holon/issue-1"
# Every write point the clean story passes, in order (a new write point must be added here,
# and so gets a crash case): state, journals, the controller's, GitHub's.
STORY = [
    "state.save:before", "state.save:after",
    "journal.events:before", "journal.events:after",
    "journal.decisions:before", "journal.decisions:after",
    "state.save:before", "state.save:after",
    "github:POST issues/{n}/comments:before", "github:POST issues/{n}/comments:after",
    "after_effect_before_journal",
    "journal.actions:before", "journal.actions:after",
    "after_journal_before_state",
    "github:PATCH issues/comments/{n}:before", "github:PATCH issues/comments/{n}:after",
    "journal.events:before", "journal.events:after",
    "journal.decisions:before", "journal.decisions:after",
    "state.save:before", "state.save:after",
    "github:POST git/trees:before", "github:POST git/trees:after",
    "github:POST git/commits:before", "github:POST git/commits:after",
    "github:POST git/refs:before", "github:POST git/refs:after",
    "github:POST pulls:before", "github:POST pulls:after",
    "after_effect_before_journal",
    "journal.actions:before", "journal.actions:after",
    "after_journal_before_state",
    "github:PATCH issues/comments/{n}:before", "github:PATCH issues/comments/{n}:after",
    "state.save:before", "state.save:after",
    "state.save:before", "state.save:after",
    "journal.actions:before", "journal.actions:after",
    "journal.decisions:before", "journal.decisions:after",
    "journal.events:before", "journal.events:after",
]  # fmt: skip


def occurrences(points: list[str]) -> list[str]:
    """Each passing of a point as the hook names it: `NAME` the first time, `NAME#N` after."""
    seen: dict[str, int] = {}
    named = []
    for point in points:
        seen[point] = seen.get(point, 0) + 1
        named.append(point if seen[point] == 1 else f"{point}#{seen[point]}")
    return named


def solve_step(root: Path, server: LoopbackGitHub) -> ActionsEnv:
    step = ActionsEnv(root, server)
    issue = step.add_issue()
    step.comment_event(issue.number, "/holon solve")
    return step


def run(step: ActionsEnv, **extra: str) -> subprocess.CompletedProcess[str]:
    """One step with `extra` variables only for it."""
    kept = dict(step.extra)
    step.extra.update(extra)
    try:
        return step.run()
    finally:
        step.extra = kept


def crash_at(step: ActionsEnv, point: str) -> None:
    done = run(step, **{CRASH_ENV: point})
    assert done.returncode == -9, f"{point} never reached: {done.stdout}{done.stderr}"


def trace(step: ActionsEnv, file: Path) -> list[str]:
    done = run(step, **{TRACE_ENV: str(file)})
    assert done.returncode == 0, done.stdout + done.stderr
    return file.read_text().splitlines()


def rerun(step: ActionsEnv) -> subprocess.CompletedProcess[str]:
    """The job run again (its next attempt) on the state the crashed step left."""
    step.new_step()
    step.attempt += 1
    done = step.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done


def records(step: ActionsEnv) -> dict[str, Any]:
    state = StateStore(step.state_dir).load()  # valid: loads, validates
    return {rid: record for rid, record in state.records.items()}


def journal_entries(step: ActionsEnv, name: str) -> list[dict[str, Any]]:
    with Journal(step.state_dir / f"{name}.ndjson") as journal:
        return list(journal.read())  # valid: CorruptJournal otherwise


def operations(server: LoopbackGitHub, operation: str) -> int:
    return sum(1 for call in server.calls if call.operation == operation)


def assert_consistent(step: ActionsEnv, server: LoopbackGitHub) -> dict[str, Any]:
    """Nothing lost, nothing doubled, state and journals valid; the subject's closure."""
    found = records(step)
    intents = {k: r for k, r in found.items() if k.startswith("intent:")}
    assert intents, "the event was lost: no intent on record"
    assert all(r.status != "inflight" for r in intents.values()), intents
    skills = sorted(str(r.data.get("skill")) for r in intents.values())
    # Handled once: one solve run, at most one publish of it.
    assert skills.count("github-issue-solve") == 1, skills
    assert skills.count("github-publish") <= 1, skills
    # Journals valid (read strictly); every receipt of the event is journaled, and decided once:
    # a receipt after the first is decided `duplicate`.
    events = journal_entries(step, "events")
    comment = [e for e in events if e.get("type") == "github.issue_comment.created"]
    assert comment, "the event was lost: not journaled"
    assert len({e["id"] for e in comment}) == 1
    # A decision line whose state save was lost is decided again under its id, to the same
    # intents (ids follow from the event): the journal's readers union lines by id.
    decided: dict[str, list[Any]] = {}
    for line in journal_entries(step, "decisions"):
        if line.get("outcome") != "duplicate":
            intents = sorted(i["id"] for i in line.get("intents") or [])
            assert decided.setdefault(line["id"], intents) == intents, "an event decided twice"
    assert f"dec:{comment[0]['id']}" in decided
    actions = journal_entries(step, "actions")
    ids = [a["id"] for a in actions]
    assert len(ids) == len(set(ids)), "an attempt journaled twice"
    done = [a for a in actions if a["status"] == "succeeded"]
    assert len({a["intent_id"] for a in done}) == len(done), "an effect performed twice"
    runs = [
        json.loads(path.read_text())["status"]
        for path in (step.runner_temp / "holon" / "runs").rglob("run.json")
    ]
    # One agent run (a failed attempt retried aside: a slow machine's).
    assert runs.count("completed") == 1, f"agent runs: {runs}"
    assert len(runs) <= 2, f"agent runs: {runs}"
    # GitHub: one comment for the subject, at most one branch and one pull request.
    assert operations(server, "issues/create-comment") == 1
    assert len(step.holon_comments(1)) == 1
    assert operations(server, "git/create-ref") <= 1
    assert operations(server, "pulls/create") <= 1
    assert len([i for i in step.repo.issues.values() if i.pull is not None]) <= 1
    closure: dict[str, Any] = found[f"closure:{SUBJECT}"].data
    assert closure["closure_outcome"] in ("completed", "waiting"), closure
    if closure["closure_outcome"] == "waiting":
        assert closure.get("waiting_reason"), closure  # never waiting without a reason
    return closure


def assert_names_what_was_made(step: ActionsEnv, comment: str) -> None:
    """A `finished` comment names what the work made, as an uninterrupted run's does: the pull
    request (linked), the commit on its branch, and what the agent's run spent on its model."""
    assert "**Outcome:** `finished`" in comment, comment
    (pull,) = [i for i in step.repo.issues.values() if i.pull is not None]
    tip = step.repo.refs[BRANCH]
    made = comment.partition("**Artifacts / state**")[2].partition("**Handoff**")[0]
    text = re.sub(r"\\(.)", r"\1", made)  # without the Markdown escapes (`\#` is `#`)
    assert f"[pull request #{pull.number}](" in text, comment
    assert f"/pull/{pull.number})" in text, comment
    assert f"commit {tip}" in text, comment
    assert re.search(r"model usage: [0-9,]+ tokens", text), comment
    assert "none recorded" not in text, comment
