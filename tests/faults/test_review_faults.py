"""Every GitHub call of the `/holon review` story (tests/faults/pr_story.py) fails in turn, in
every way GitHub fails: a 5xx, a write GitHub did whose answer was lost, a secondary rate limit,
a 403, a 404. Afterwards (the failing step, then the job run again where the first did not
finish) the pull request has one Holon review at most, on the head the run reviewed, one Holon
comment, one check run and none left in progress, the branch untouched, state and journals
valid, and the comment says what happened: `finished` only with the review posted.

`STORY` is the story's calls, checked under the transparent faults. By default: those faults
in one step, a fixed sample (`SAMPLE`) and `UNDECIDED` (a lost write whose look-up is refused:
the work waits on the operator); `HOLON_FAULTS_FULL=1` runs every call with every mode.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.pr_faults import (
    FULL,
    Case,
    Group,
    alone,
    every_case,
    retried_story,
    run_cases,
)

# The clean story's calls, in order (method, operation).
STORY: list[tuple[str, str]] = [
    ("GET", "actions/list-artifacts-for-repo"),
    ("GET", "pulls/get"),
    ("GET", "issues/list-comments"),
    ("POST", "issues/create-comment"),
    ("GET", "issues/list-comments"),
    ("GET", "checks/list-for-ref"),
    ("POST", "checks/create"),
    ("GET", "pulls/get"),
    ("GET", "issues/list-comments"),
    ("GET", "repos/get-collaborator-permission-level"),
    ("GET", "pulls/list-reviews"),
    ("GET", "pulls/list-review-comments"),
    ("GET", "pulls/list-files"),
    ("GET", "pulls/get"),
    ("GET", "pulls/list-commits"),
    ("GET", "checks/list-for-ref"),
    ("GET", "pulls/get"),
    ("GET", "issues/get-comment"),
    ("GET", "pulls/get"),
    ("GET", "pulls/list-reviews"),
    ("GET", "pulls/list-review-comments"),
    ("POST", "pulls/create-review"),
    ("PATCH", "issues/update-comment"),
    ("PATCH", "checks/update"),
]
SAMPLE: list[Case] = [
    ("POST", "pulls/create-review", 0, "accepted_then_timeout"),
    ("GET", "pulls/list-reviews", 1, "secondary_rate_limit"),
    ("POST", "checks/create", 0, "403"),
    # The check run's completion is refused: the re-run's settle completes it.
    ("PATCH", "checks/update", 0, "403"),
]
# The review's answer is lost and reading the reviews back is refused (twice): whether GitHub
# has the review is unknown. Not posted again (it could double), not `failed` (it may be
# there): the work waits on the operator, the comment saying what to look at.
UNDECIDED: Group = (
    (
        ("POST", "pulls/create-review", 0, "accepted_then_timeout"),
        ("GET", "pulls/list-reviews", 2, "403"),
        ("GET", "pulls/list-reviews", 3, "403"),
    ),
    "askuserQuestion",
)
GROUPS = [*alone(every_case(STORY) if FULL else SAMPLE), UNDECIDED]


def test_faults_the_client_retries_change_nothing(tmp_path: Path) -> None:
    seen = retried_story(tmp_path, "review", STORY)
    assert (seen["outcome"], seen["reviews"]) == ("finished", 1), seen
    assert set(SAMPLE) <= set(every_case(STORY))


@pytest.mark.parametrize("full", [FULL], ids=["full" if FULL else "sample"])
def test_every_call_failing_every_way_ends_consistent(tmp_path: Path, full: bool) -> None:
    problems = run_cases(tmp_path, "review", GROUPS)
    assert not problems, "\n".join(problems)
