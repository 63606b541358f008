"""Every GitHub call of the `/holon fix` story (tests/faults/pr_story.py) fails in turn, in every
way GitHub fails: a 5xx, a write GitHub did whose answer was lost, a secondary rate limit, a
403, a 404. Afterwards (the failing step, then the job run again where the first did not finish)
the branch moved once at most (one fix commit on the head, never two), the thread has one reply
at most, one Holon comment, one check run per head and none left in progress, state and
journals valid, and the comment says what happened: `finished` only with the fix pushed.

`STORY` is the story's calls, checked under the transparent faults. By default: those faults
in one step, a fixed sample (`SAMPLE`) and `UNDECIDED` (a lost write whose look-up is refused:
the work waits on the operator); `HOLON_FAULTS_FULL=1` runs every call with every mode
(`pr_faults.every_case`).
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
    ("GET", "git/get-ref"),
    ("GET", "git/get-commit"),
    ("GET", "git/get-tree"),
    ("GET", "git/get-blob"),
    ("POST", "git/create-tree"),
    ("POST", "git/create-commit"),
    ("PATCH", "git/update-ref"),
    ("GET", "pulls/list-review-comments"),
    ("POST", "pulls/create-reply-for-review-comment"),
    ("GET", "pulls/list-review-comments"),  # again: did another job post the same reply?
    ("PATCH", "issues/update-comment"),
    ("PATCH", "checks/update"),
    ("GET", "checks/list-for-ref"),
    ("POST", "checks/create"),
]
SAMPLE: list[Case] = [
    ("PATCH", "git/update-ref", 0, "accepted_then_timeout"),
    ("POST", "pulls/create-reply-for-review-comment", 0, "5xx"),
    ("GET", "git/get-ref", 0, "404"),
    # The settle's comment write fails: the check runs are completed all the same.
    ("PATCH", "issues/update-comment", 0, "5xx"),
]
# The ref update's answer is lost and reading the branch back is refused (twice): whether the
# fix is on the branch is unknown. Not pushed again, not `failed`: the work waits on the
# operator, the comment saying what to look at.
UNDECIDED: Group = (
    (
        ("PATCH", "git/update-ref", 0, "accepted_then_timeout"),
        ("GET", "git/get-ref", 1, "403"),
        ("GET", "git/get-ref", 2, "403"),
    ),
    "askuserQuestion",
)
GROUPS = [*alone(every_case(STORY) if FULL else SAMPLE), UNDECIDED]


def test_faults_the_client_retries_change_nothing(tmp_path: Path) -> None:
    seen = retried_story(tmp_path, "fix", STORY)
    assert (seen["outcome"], seen["moved"], seen["replies"]) == ("finished", True, 1), seen
    assert set(SAMPLE) <= set(every_case(STORY))


@pytest.mark.parametrize("full", [FULL], ids=["full" if FULL else "sample"])
def test_every_call_failing_every_way_ends_consistent(tmp_path: Path, full: bool) -> None:
    problems = run_cases(tmp_path, "fix", GROUPS)
    assert not problems, "\n".join(problems)
