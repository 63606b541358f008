"""Every GitHub call of the `/holon solve` story fails in turn, in every way GitHub fails: a
5xx, a write GitHub did whose answer was lost, a secondary rate limit, a 403, a 404. Afterwards
(the failing step, then the job run again with the same event where the first did not finish)
there is at most one Holon comment and one pull request, no review, the state and journals are
valid, the event is handled, and the comment and outputs say what really happened: never
`finished` without the pull request.

The story makes the calls in `STORY` (its routes checked against a clean run). Cases: every
distinct route with every mode (by default a deterministic sample: `_cases`). Modes the client
retries (a 5xx or lost answer on a read, a short secondary limit on anything) are transparent:
one run fails every route's first call at once and must end exactly as the clean story. The
others change the story's path, one case each; they run a few at a time (each on its own fake)
to keep the suite short. `HOLON_FAULTS_FULL=1` runs
every route with every mode (63 cases, about three minutes), `HOLON_FAULTS_EVERY_INDEX=1` every
call index with every mode (100 cases, about five minutes)."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.faults.story import (
    BRANCH,
    Story,
    assert_exit_clean,
    assert_state_valid,
    first_step,
    outputs,
    run_again,
    summary,
)
from tests.support.github_fake.faults import MODES, Fault, Mode
from tests.support.github_fake.loopback import LoopbackGitHub

TOKEN = "ghs_" + "f" * 36
# The clean story's calls, in order (method, operation).
STORY: list[tuple[str, str]] = [
    ("GET", "actions/list-artifacts-for-repo"),
    ("GET", "issues/list-comments"),
    ("POST", "issues/create-comment"),
    ("GET", "issues/list-comments"),
    ("GET", "issues/get"),
    ("GET", "repos/get-collaborator-permission-level"),
    ("GET", "issues/list-comments"),
    ("GET", "issues/get-comment"),
    ("GET", "issues/get"),
    ("GET", "repos/get"),
    ("GET", "git/get-ref"),
    ("GET", "git/get-commit"),
    ("GET", "git/get-tree"),
    ("GET", "git/get-blob"),
    ("POST", "git/create-tree"),
    ("POST", "git/create-commit"),
    ("POST", "git/create-ref"),
    ("GET", "pulls/list"),
    ("POST", "pulls/create"),
    ("PATCH", "issues/update-comment"),
]
ROUTES = sorted(set(STORY))
READS = [route for route in ROUTES if route[0] == "GET"]
# Terminal for the call: the client does not send it again (a long secondary limit is one
# Holon will not sit through: HOLON_GITHUB_MAX_WAIT is 1s in these stories).
REFUSALS: tuple[Mode, ...] = ("secondary_rate_limit", "403", "404")
RETRY_LATER = 60
WORKERS = 3
_PULL_LINK = re.compile(r"pull request \\#(\d+)")


def _cases() -> list[tuple[int | None, str, str, Mode]]:
    """Every call index with every mode (`HOLON_FAULTS_EVERY_INDEX=1`), every route with every
    mode the client does not retry (`HOLON_FAULTS_FULL=1`), or by default a deterministic
    sample: each write with both ambiguous modes (5xx, lost answer), and the refusals taken in
    turn over every route, so each route gets one and each refusal is met on reads and writes."""
    if os.environ.get("HOLON_FAULTS_EVERY_INDEX") == "1":
        return [(i, m, op, mode) for i, (m, op) in enumerate(STORY) for mode in MODES]
    full = os.environ.get("HOLON_FAULTS_FULL") == "1"
    cases: list[tuple[int | None, str, str, Mode]] = []
    for number, (method, operation) in enumerate(ROUTES):
        modes: tuple[Mode, ...] = REFUSALS if full else (REFUSALS[number % len(REFUSALS)],)
        if method != "GET":
            modes = ("5xx", "accepted_then_timeout", *modes)
        cases += [(None, method, operation, mode) for mode in modes]
    return cases


CASES = _cases()


def _fault(case: tuple[int | None, str, str, Mode]) -> Fault:
    index, method, operation, mode = case
    if index is not None:
        return Fault(mode, index=index, retry_after=RETRY_LATER)
    return Fault(mode, operation=operation, method=method, retry_after=RETRY_LATER)


def check_truth(story: Story, final: bool) -> None:
    """What GitHub holds after a step, and whether the comment and outputs tell the truth."""
    pulls = story.pulls()
    assert len(story.comments()) <= 1, story.comments()
    assert len(pulls) <= 1, [p.title for p in pulls]
    for pull in pulls:
        assert pull.pull is not None
        assert pull.pull.head == BRANCH
        login = story.first.server.login
        assert len([r for r in pull.pull.reviews if r.get("user") == login]) <= 1
    outcome = story.outcome()
    comment = story.comments()[-1] if story.comments() else ""
    if outcome == "finished":
        assert len(pulls) == 1, "the comment says finished, and no pull request was opened"
        linked = _PULL_LINK.search(comment)
        assert linked, comment
        assert int(linked.group(1)) == pulls[0].number, comment
    said = outputs(story.last).get("lifecycle_outcome")
    if said == "finished":
        assert len(pulls) == 1, "the outputs say finished, and no pull request was opened"
    if final:
        # Handled: the comment is settled (not left `working` forever) and, unless it
        # finished, says what stopped it.
        assert outcome not in (None, "working", "?"), (outcome, comment)
        if outcome != "finished":
            assert "**Outcome:**" in comment, comment
            assert len(comment) > 200, comment  # more than the outcome: what happened
    assert_state_valid(story.last.state_dir)


def _story(tmp: Path, *faults: Fault) -> tuple[Story, list[str]]:
    """The story with `faults`, then run again if the first step did not finish; the
    operations the faults hit."""
    with LoopbackGitHub(token=TOKEN) as server:
        story = first_step(tmp, server, *faults)
        hit = [str(operation) for _, operation, _ in server.faults.fired]
        assert_exit_clean(story.first_done)
        check_truth(story, final=False)
        if story.first_done.returncode != 0 or story.outcome() != "finished":
            run_again(tmp, server, story)
            assert story.again_done is not None
            assert_exit_clean(story.again_done)
        check_truth(story, final=True)
    server.assert_clean()
    return story, hit


def test_the_story_makes_the_recorded_calls(tmp_path: Path) -> None:
    with LoopbackGitHub(token=TOKEN) as server:
        story = first_step(tmp_path, server)
        assert story.first_done.returncode == 0, story.first_done.stderr
        made = [(c.method, str(c.operation)) for c in server.calls]
        # The comment is settled once, after the pull request exists: never `finished`
        # before it (the run's settle waits for its publishing's pass).
        sent = [op for method, op in made if method != "GET"]
        assert sent[-2:] == ["pulls/create", "issues/update-comment"], sent
        assert sent.count("issues/update-comment") == 1, sent
        # A clean story finished; a re-run of its job changes nothing on GitHub.
        check_truth(story, final=True)
        assert story.outcome() == "finished"
        comments, writes = story.comments(), _writes(server)
        run_again(tmp_path, server, story)
        assert story.again_done is not None
        assert story.again_done.returncode == 0
        assert story.comments() == comments
        assert _writes(server) == writes
    # The order of a few reads depends on timing; the routes do not.
    assert sorted(set(made)) == ROUTES, f"the story's routes changed: update STORY: {made}"


def _writes(server: LoopbackGitHub) -> int:
    return sum(1 for c in server.calls if c.method != "GET")


@pytest.mark.parametrize(
    ("mode", "retry_after"),
    [("5xx", RETRY_LATER), ("accepted_then_timeout", RETRY_LATER), ("secondary_rate_limit", 0)],
)
def test_faults_the_client_retries_change_nothing(
    tmp_path: Path, mode: Mode, retry_after: int
) -> None:
    # A read's 5xx or lost answer is sent again; a short secondary limit is waited out for
    # any method: each route's first call failing once ends as the clean story, in one step.
    routes = READS if mode != "secondary_rate_limit" else ROUTES
    faults = [
        Fault(mode, operation=op, method=method, retry_after=retry_after) for method, op in routes
    ]
    with LoopbackGitHub(token=TOKEN) as server:
        story = first_step(tmp_path, server, *faults)
        assert sorted({str(op) for _, op, _ in server.faults.fired}) == sorted(
            op for _, op in routes
        )
        assert story.first_done.returncode == 0, summary(story)
        check_truth(story, final=True)
        assert story.outcome() == "finished", summary(story)
        assert len(story.pulls()) == 1
    server.assert_clean()


def test_every_route_failing_every_way_ends_consistent(tmp_path: Path) -> None:
    def one(number: int) -> str | None:
        case = CASES[number]
        try:
            # A failed write of the comment itself is written by the re-run (serve/unsettled.py).
            story, hit = _story(tmp_path / f"case-{number}", _fault(case))
        except AssertionError as exc:
            return f"{case}: {str(exc)[:600]}"
        if case[0] is None and hit != [case[2]]:
            return f"{case}: the fault hit {hit}"
        del story
        return None

    with ThreadPoolExecutor(WORKERS) as pool:
        problems = [p for p in pool.map(one, range(len(CASES))) if p]
    assert not problems, "\n".join(problems)


def test_a_comment_whose_answer_times_out_is_not_posted_twice(tmp_path: Path) -> None:
    # The answer to the progress comment's POST never comes (the client's 1s timeout, not a
    # dropped connection): GitHub has the comment, and Holon finds it by its marker.
    slow = Fault("accepted_then_timeout", operation="issues/create-comment", stall=2.5)
    with LoopbackGitHub(token=TOKEN) as server:
        story = first_step(tmp_path, server, slow, env={"HOLON_GITHUB_TIMEOUT": "1s"})
        assert server.count("issues/create-comment") == 1
        if story.first_done.returncode != 0 or story.outcome() != "finished":
            run_again(tmp_path, server, story)
        check_truth(story, final=True)
        assert len(story.comments()) == 1
        assert server.count("issues/create-comment") == 1
    server.assert_clean()


def test_a_failed_settle_is_written_by_the_rerun(tmp_path: Path) -> None:
    # The last write of the story, the comment's handoff with the pull request, fails (502);
    # the job fails, and its re-run should write the handoff the comment lacks.
    last = Fault("5xx", operation="issues/update-comment", method="PATCH", nth=0)
    with LoopbackGitHub(token=TOKEN) as server:
        story = first_step(tmp_path, server, last)
        assert story.first_done.returncode == 1
        run_again(tmp_path, server, story)
        check_truth(story, final=True)
