"""Two jobs given the same `/holon solve` (`scenario.py`, 2 runs) forced into the interleaving
that opened two pull requests for one issue: the loopback GitHub holds both jobs' look-up of
the branch's pull request (`pulls/list` by head) until both have asked, so both find none and
both create. GitHub keeps one open pull request per head and base and refuses the second
(422 "A pull request already exists"); the job refused takes the one the other opened.

Before, the fake took both creates (two pull requests for the issue, as the 8-way race in
`test_concurrent_runs.py` did now and then under load), and on GitHub the refused job failed
its publish after the push (PushedThenFailed): a failed attempt, then a second that found the
pull request.
"""

from __future__ import annotations

from pathlib import Path

from tests.races.scenario import Steps, dump, journal_entries, race
from tests.support.github_fake.loopback import LoopbackGitHub

ISSUE = 3  # the seed solves issue 1 (its pull request is 2): the race's issue is the next one


def test_two_jobs_that_both_found_no_pull_request_open_one(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    head = f"holon/issue-{ISSUE}"
    held = github_server.hold("pulls/list", 2, {"head": f"octocat:{head}"})
    result = race(steps, github_server, 2, tmp_path)
    why = dump(result)
    assert [d.number for d in result.deliveries] == [ISSUE, ISSUE], why
    assert held.met, f"the look-ups were not forced together\n{why}"
    for done in result.results:
        assert done.returncode == 0, why
    repo = result.seed.repo
    pulls = [i.number for i in repo.issues.values() if i.pull and i.pull.head == head]
    assert len(pulls) == 1, why
    # The seed's create, then both jobs' (GitHub refused one of them).
    assert github_server.count("pulls/create") == 3, why
    # Neither job's publish failed an attempt (the refused one is not retried: it is done).
    for step in result.steps:
        for name, entry in journal_entries(step.runner_temp / "holon" / "upload"):
            if name == "actions":
                assert entry.get("error") is None, f"{step.name}: {entry}\n{why}"
                assert entry.get("attempt") == 1, f"{step.name}: {entry}\n{why}"
    (comment,) = result.seed.holon_comments(ISSUE)
    assert "**Outcome:** `finished`" in comment, comment
    assert f"pull request \\#{pulls[0]}" in comment, comment
