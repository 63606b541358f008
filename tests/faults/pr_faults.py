"""The fault cases of a pull request story (tests/faults/pr_story.py) and how one is run: the
step with the fault, then the job run again (attempt 2, the first attempt's state, no fault)
unless the first step finished, and `check_pr_truth` after each.

A case is (method, operation, occurrence, mode): the `occurrence`th call (from 0) of that
route fails with `mode`. `HOLON_FAULTS_FULL=1` makes every call of the story fail every way the
client does not simply send again: a write (its every occurrence) with each of the five modes,
a read (its every occurrence) with each refusal. Reads' 5xx and lost answers, and short
secondary limits anywhere, are sent again by the client: one step fails each of them at once
(`transparent`). By default the test files run a short fixed sample.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.faults.pr_story import Kind, check_pr_truth, dump, first_pr_step
from tests.faults.story import assert_exit_clean, run_again
from tests.support.github_fake.faults import MODES, Fault, Mode
from tests.support.github_fake.loopback import LoopbackGitHub

TOKEN = "ghs_" + "f" * 36
REFUSALS: tuple[Mode, ...] = ("secondary_rate_limit", "403", "404")
RETRY_LATER = 60  # a secondary limit longer than HOLON_GITHUB_MAX_WAIT: the call fails
WORKERS = 3
Case = tuple[str, str, int, Mode]
# Faults scheduled together, and the outcome the story must end with (None: any true one).
Group = tuple[tuple[Case, ...], str | None]
FULL = os.environ.get("HOLON_FAULTS_FULL") == "1"


def every_case(story: Sequence[tuple[str, str]]) -> list[Case]:
    """Every call of `story` with every mode that changes its path."""
    seen: dict[tuple[str, str], int] = {}
    cases: list[Case] = []
    for method, operation in story:
        nth = seen.get((method, operation), 0)
        seen[(method, operation)] = nth + 1
        modes = MODES if method != "GET" else REFUSALS
        cases += [(method, operation, nth, mode) for mode in modes]
    return cases


def fault(case: Case) -> Fault:
    method, operation, nth, mode = case
    return Fault(mode, operation=operation, method=method, nth=nth, retry_after=RETRY_LATER)


def run_case(tmp: Path, kind: Kind, cases: Sequence[Case], expect: str | None = None) -> str | None:
    """The story with `cases`' faults all scheduled; None when everything held (and the story
    ended with the outcome `expect`, when given), else what did not."""
    try:
        with LoopbackGitHub(token=TOKEN) as server:
            story = first_pr_step(tmp, server, kind, *(fault(c) for c in cases))
            hit = [str(operation) for _, operation, _ in server.faults.fired]
            if hit != [c[1] for c in cases]:
                return f"{cases}: the faults hit {hit}"
            assert_exit_clean(story.first_done)
            check_pr_truth(story, kind, final=False)
            if story.first_done.returncode != 0 or story.outcome() != "finished":
                run_again(tmp, server, story)
                assert story.again_done is not None
                assert_exit_clean(story.again_done)
            seen = check_pr_truth(story, kind, final=True)
            assert expect is None or seen["outcome"] == expect, seen
        server.assert_clean()
    except AssertionError as exc:
        where = dump(story) if "story" in locals() else ""
        return f"{cases}: {str(exc)[:700]} {where[-600:]}"
    return None


def run_cases(tmp: Path, kind: Kind, groups: Sequence[Group]) -> list[str]:
    """Each group's faults on its own fake, a few groups at a time; the problems found."""

    def one(number: int) -> str | None:
        cases, expect = groups[number]
        return run_case(tmp / f"case-{number}", kind, cases, expect)

    with ThreadPoolExecutor(WORKERS) as pool:
        return [p for p in pool.map(one, range(len(groups))) if p]


def alone(cases: Sequence[Case]) -> list[Group]:
    """Each case a group of its own, its outcome whatever is true."""
    return [((case,), None) for case in cases]


def transparent(story: Sequence[tuple[str, str]]) -> list[Fault]:
    """Every read's first call answered 502, then a short secondary limit; every write's first
    call a short secondary limit: each sent again by the client, the story unchanged."""
    routes = sorted(set(story))
    faults = [Fault("5xx", operation=op, method=m) for m, op in routes if m == "GET"]
    return faults + [
        Fault("secondary_rate_limit", operation=op, method=m, retry_after=0) for m, op in routes
    ]


def retried_story(tmp: Path, kind: Kind, story: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The story with every route's first call failing in a way the client sends again
    (`transparent`): it ends as the clean one, in one step, and makes the calls of `story`
    besides the ones sent again. What it left on GitHub (`check_pr_truth`)."""
    with LoopbackGitHub(token=TOKEN) as server:
        faults = transparent(story)
        done = first_pr_step(tmp, server, kind, *faults)
        made = Counter((c.method, str(c.operation)) for c in server.calls)
        again = Counter((f.method or "", str(op)) for _, op, f in server.faults.fired)
        assert done.first_done.returncode == 0, done.first_done.stderr
        seen = check_pr_truth(done, kind, final=True)
    server.assert_clean()
    assert len(server.faults.fired) == len(faults)
    # The order of a few reads depends on timing; the calls and their counts do not.
    assert made - again == Counter(story), f"the story's calls changed: update STORY: {made}"
    return seen
