"""The pull request stories (tests/faults/pr_story.py: `/holon fix`, `/holon review` on Holon's
pull request #2) with a SIGKILL at one write point (holon/crashpoints.py), then the job run again
on the state the crash left, and what must hold afterwards: the event handled once by one agent
run, no intent inflight, one Holon comment created, the fix pushed once (the branch one commit
past the head) or the review posted once, the thread replied to once, a check run per head and
none in progress, the comment `finished` with a completed closure.

`HOLON_FAULTS_FULL=1` makes the test files kill the story at every write point it passes (each
passing); by default at a fixed sample of the ambiguous ones."""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.crash.story import (
    crash_at,
    journal_entries,
    occurrences,
    records,
    rerun,
    run,
    trace,
)
from tests.faults.pr_faults import FULL
from tests.faults.pr_story import BRANCH, SKILL, Kind, check_pr_truth, pr_step, pull_of
from tests.faults.story import Story
from tests.support.actions_env import ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub

TOKEN = "ghs_" + "f" * 36
WORKERS = 3
SUBJECT = "pull_request:2"


def family(point: str) -> str:
    """A write point without its side and count: `github:POST git/trees`, `state.save`."""
    return point.partition("#")[0].removesuffix(":before").removesuffix(":after")


def traced(tmp: Path, kind: Kind) -> list[str]:
    """The write points the clean story passes, each passing named as the hook counts it."""
    with LoopbackGitHub(token=TOKEN) as server:
        step = pr_step(tmp, server, kind)
        points = trace(step, tmp / "trace")
    server.assert_clean()
    return occurrences(points)


def calls(server: LoopbackGitHub, operation: str) -> int:
    return sum(1 for call in server.calls if call.operation == operation)


def assert_handled_once(
    step: ActionsEnv, server: LoopbackGitHub, kind: Kind, cleanup: bool = False
) -> dict[str, Any]:
    """Nothing lost, nothing doubled, state and journals valid; the subject's closure."""
    found = records(step)
    intents = {k: r for k, r in found.items() if k.startswith("intent:")}
    assert intents, "the event was lost: no intent on record"
    assert all(r.status != "inflight" for r in intents.values()), intents
    skills = sorted(str(r.data.get("skill")) for r in intents.values())
    assert skills.count(SKILL[kind]) == 1, skills
    assert skills.count("github-publish") <= 1, skills
    actions = journal_entries(step, "actions")
    ids = [a["id"] for a in actions]
    assert len(ids) == len(set(ids)), "an attempt journaled twice"
    done = [a for a in actions if a["status"] == "succeeded"]
    assert len({a["intent_id"] for a in done}) == len(done), "an effect performed twice"
    journal_entries(step, "events")
    journal_entries(step, "decisions")
    runs = [p.parent.name for p in (step.runner_temp / "holon" / "runs").rglob("run.json")]
    # One agent run (a killed one's run aside); none when the cleanup stopped the work first.
    assert (0 if cleanup else 1) <= len(runs) <= 2, f"agent runs: {runs}"
    assert calls(server, "issues/create-comment") == 1
    assert calls(server, "git/update-ref") <= 1
    assert calls(server, "pulls/create-review") <= 1
    assert calls(server, "pulls/create-reply-for-review-comment") <= 1
    closure: dict[str, Any] = found[f"closure:{SUBJECT}"].data
    return closure


def crash_case(tmp: Path, kind: Kind, point: str) -> str | None:
    """Killed at `point`, then run again: None when everything held, else what did not.
    `cleanup:POINT`: the composite's cleanup step runs after the killed one, before the job is
    run again: nothing is repeated blindly, the work ends completed or waits on the operator
    (saying why), and a further run changes nothing.

    The steps get a temp dir of their own: a process killed mid-run leaves its scratch
    (`holon-head-*`, `holon-context-*`) there; the steps after it must leave nothing more."""
    cleanup = point.startswith("cleanup:")
    scratch = tmp / "tmpdir"
    scratch.mkdir(parents=True)
    try:
        with LoopbackGitHub(token=TOKEN) as server:
            step = pr_step(tmp, server, kind)
            step.extra["TMPDIR"] = str(scratch)
            number = max(step.repo.issues)
            head = pull_of(step.repo, number).head_sha
            crash_at(step, point.removeprefix("cleanup:"))
            if cleanup:
                cleaned = run(step, HOLON_PHASE="cleanup")
                assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
                check_cut_short(step, kind, number, head)
            killed = {p.name for p in scratch.iterdir() if p.name.startswith("holon-")}
            done = rerun(step)
            closure = assert_handled_once(step, server, kind, cleanup)
            seen = check_pr_truth(Story(step, done, number=number, head=head), kind, final=True)
            if cleanup and closure["closure_outcome"] != "completed":
                assert closure["closure_outcome"] == "waiting", closure
                assert closure["waiting_reason"] == "awaiting_operator_input", closure
                (comment,) = step.holon_comments(number)
                assert "stopped by the user" not in comment, comment
                assert "cut short" in comment, comment
            else:
                # The direct restart finishes the work: recovery reconciles what was inflight.
                assert closure["closure_outcome"] == "completed", closure
                assert seen["outcome"] == "finished", seen
                if kind == "fix":
                    assert (seen["moved"], seen["replies"]) == (True, 1), seen
                else:
                    assert seen["reviews"] == 1, seen
                check_names_what_was_made(step, kind, number, head)
            if cleanup:
                writes = len(server.calls)
                rerun(step)
                assert not [c for c in server.calls[writes:] if c.method != "GET"]
            left = {p.name for p in scratch.iterdir() if p.name.startswith("holon-")} - killed
            assert not left, f"the steps after the kill left {sorted(left)}"
        server.assert_clean()
    except AssertionError as exc:
        return f"{point}: {str(exc)[:900]}"
    return None


def check_cut_short(step: ActionsEnv, kind: Kind, number: int, head: str) -> None:
    """After the cleanup step, a comment the cleanup settled tells the truth: the step was cut
    short (no user stopped it), and it names what GitHub holds: the fix commit the branch moved
    to, the review posted, or that there is none."""
    (comment,) = step.holon_comments(number)
    if "`userinterlude`" not in comment:
        return  # settled otherwise (recovered from the journal, or never announced)
    assert "stopped by the user" not in comment, comment
    assert "cut short" in comment, comment
    evidence = comment.partition("**Evidence**")[2].partition("**Handoff**")[0]
    pull = pull_of(step.repo, number)
    login = step.server.login
    tip = step.repo.refs[f"heads/{BRANCH}"]
    reviews = [r for r in pull.reviews if r.get("user") == login]
    if kind == "fix" and tip != head:
        assert f"the fix commit {tip} was pushed" in unescaped(evidence), comment
        assert f"commit {tip}" in evidence, comment
        assert "none recorded" not in evidence, comment
    elif kind == "review" and reviews:
        assert f"the review of {head} was posted" in unescaped(evidence), comment
        assert f"review of {head}" in evidence, comment


def check_names_what_was_made(step: ActionsEnv, kind: Kind, number: int, head: str) -> None:
    """A finished comment names what the work made, as an uninterrupted run's does, whatever
    the kill lost: the fix commit the branch moved to, or the commit the review is of."""
    (comment,) = step.holon_comments(number)
    made = unescaped(comment.partition("**Artifacts / state**")[2].partition("**Handoff**")[0])
    if kind == "fix":
        assert f"commit {step.repo.refs[f'heads/{BRANCH}']}" in made, comment
    else:
        assert f"review of {head}" in made, comment
    assert "none recorded" not in made, comment


def unescaped(markdown: str) -> str:
    """The comment's text without its Markdown escapes (`\\:` is `:`)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def full_cases(points: Sequence[str]) -> list[str]:
    """Every passing of every point, and each GitHub write answered then the cleanup step."""
    answered = [
        p for p in points if p.startswith("github:") and p.partition("#")[0].endswith(":after")
    ]
    return [*points, *(f"cleanup:{p}" for p in answered)]


def crash_cases(tmp: Path, kind: Kind, points: Sequence[str]) -> list[str]:
    def one(number: int) -> str | None:
        return crash_case(tmp / f"case-{number}", kind, points[number])

    with ThreadPoolExecutor(WORKERS) as pool:
        return [p for p in pool.map(one, range(len(points))) if p]


def killed_at_each_point(tmp: Path, kind: Kind, families: set[str], sample: list[str]) -> None:
    """The story passes exactly `families` of write points; killed at each (`sample` by
    default, every passing with HOLON_FAULTS_FULL=1), then run again, it ends consistent."""
    points = traced(tmp / "trace", kind)
    assert {family(p) for p in points} == families, sorted({family(p) for p in points})
    assert set(sample) <= set(points) | {f"cleanup:{p}" for p in points}
    problems = crash_cases(tmp, kind, full_cases(points) if FULL else sample)
    assert not problems, "\n".join(problems)
