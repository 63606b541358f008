"""One change request delivered to two jobs (`scenario.py`, 2 runs of the pr-fix) forced into the
interleaving that posted the fix's review-thread reply twice: the loopback GitHub holds both
jobs' publishing look-up of the review comments (`pulls/list-review-comments`, `page=1`; the
context's listing has no `page`) until both have asked, so both find no reply and both post.
The job whose push lost takes the other's commit, so both replies name the same commit; after
posting, each lists the threads again, and the job whose reply is the newer deletes it. One
reply stands, and both jobs' publish outputs name it.

Before, both replies stood (the 8-way race in `test_concurrent_runs.py` left two now and then
under load).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.races.scenario import THREAD, Race, Steps, dump, journal_entries, race
from tests.support.github_fake.loopback import LoopbackGitHub


def _replied(result: Race) -> list[list[int]]:
    """The replies each racing job's successful publish names (its `actions` journal)."""
    found = []
    for step in result.steps:
        for name, entry in journal_entries(step.runner_temp / "holon" / "upload"):
            effect: dict[str, Any] = entry.get("effect") or {}
            if name == "actions" and entry.get("status") == "succeeded" and "replies" in effect:
                found.append(effect["replies"]["replies"])
    return found


def test_two_jobs_that_both_found_no_reply_leave_one(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    held = github_server.hold("pulls/list-review-comments", 2, {"page": "1"})
    result = race(steps, github_server, 2, tmp_path, plan=("review", "review"))
    why = dump(result)
    assert held.met, f"the look-ups were not forced together\n{why}"
    for done in result.results:
        assert done.returncode == 0, why
    pull = result.seed.repo.issue(result.pull).pull
    assert pull is not None
    replies = [c for c in pull.review_comments if c.get("in_reply_to_id") == THREAD]
    assert len(replies) == 1, why
    # Both posted (neither saw the other's reply); the newer one was deleted by its job.
    assert github_server.count("pulls/create-reply-for-review-comment") == 2, why
    assert github_server.count("pulls/delete-review-comment") == 1, why
    assert _replied(result) == [[replies[0]["id"]]] * 2, why
