"""`holon serve` merging through the policy, against the loopback GitHub: merged when allowed,
approved and green; refused when not approved; a wait on a 409; the merge never sent twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.github.merge_support import check, holon_pull, pull_of, review
from tests.serve.github_serve import REPO, hold_triggers, journal, review_event, serve

POLICY = """\
version: 1
settings:
  allow_merge: true
rules:
  - name: merge-when-approved
    on: github.pull_request_review.submitted
    review_state: approved
    do: merge
    args: {method: squash}
"""
MERGE = "pulls/merge"


def _ready(server: Any, *, approved: bool = True) -> str:
    repo = server.state.repos[REPO]
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    if approved:
        review(issue)
    check(repo, sha)
    return sha


def _merge(server: Any, tmp_path: Path, sha: str, ident: int = 1) -> Any:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    event = review_event(2, sha, "approved", ident=ident)
    hold_triggers(server, [event])
    return serve(server, tmp_path / "s", [event], "--policy", str(policy))


def test_an_approved_green_pull_request_is_merged_at_the_events_head(
    github_server: Any, tmp_path: Path
) -> None:
    sha = _ready(github_server)
    run = _merge(github_server, tmp_path, sha)
    assert run.returncode == 0, run.stderr
    pull = pull_of(github_server.state.repos[REPO].issues[2])
    assert pull.merged
    (action,) = [a for a in journal(tmp_path / "s", "actions") if a["type"] == "merge"]
    assert action["status"] == "succeeded"
    assert action["output"]["sha"] == pull.merge_commit_sha
    assert github_server.count(MERGE) == 1
    # The pass only merged, and the merge closes the pull request's work: completed.
    state = json.loads((tmp_path / "s" / "state.json").read_text())
    closure = state["records"]["closure:pull_request:2"]["data"]
    assert (closure["closure_outcome"], closure["exit_code"]) == ("completed", 0)
    # The guardrails' pass read the pull request once; the merge reads it again, fresh.
    assert github_server.count("pulls/get") == 2
    assert github_server.count("pulls/list-reviews") == 2


def test_a_pull_request_not_approved_is_not_merged(github_server: Any, tmp_path: Path) -> None:
    sha = _ready(github_server, approved=False)
    run = _merge(github_server, tmp_path, sha)
    assert run.returncode == 0, run.stderr  # refused by the guardrail: nothing was attempted
    assert "the pull request is not approved" in str(journal(tmp_path / "s", "decisions"))
    assert not [a for a in journal(tmp_path / "s", "actions") if a["type"] == "merge"]
    assert github_server.count(MERGE) == 0


def test_a_409_is_a_wait_on_an_external_change_not_a_failure(
    github_server: Any, tmp_path: Path
) -> None:
    sha = _ready(github_server)
    github_server.fail(MERGE, 409)
    run = _merge(github_server, tmp_path, sha)
    assert run.returncode == 3, run.stderr  # not finished, nobody needs to act
    assert "pull_request:2 (awaiting_external_change)" in run.stdout
    state = json.loads((tmp_path / "s" / "state.json").read_text())
    closure = state["records"]["closure:pull_request:2"]["data"]
    assert closure["closure_outcome"] == "waiting"
    assert closure["detail"].startswith("waiting for the head moved while merging")
    (action,) = [a for a in journal(tmp_path / "s", "actions") if a["type"] == "merge"]
    assert action["status"] == "succeeded"
    assert action["effect"]["performed"] is False
    assert "head moved" in action["effect"]["wait"]
    assert github_server.count(MERGE) == 1  # never sent again


def test_a_5xx_on_the_merge_is_read_back_and_never_sent_twice(
    github_server: Any, tmp_path: Path
) -> None:
    sha = _ready(github_server)
    github_server.fail(MERGE, 502, times=5)
    run = _merge(github_server, tmp_path, sha)
    assert run.returncode == 1, run.stderr
    actions = [a for a in journal(tmp_path / "s", "actions") if a["type"] == "merge"]
    assert [a["status"] for a in actions] == ["failed", "failed"]
    assert "may or may not have merged" in actions[0]["error"]
    assert "attempted once per decision" in actions[1]["error"]
    assert github_server.count(MERGE) == 1


def test_a_later_merge_lifts_the_wait_the_earlier_one_left(
    github_server: Any, tmp_path: Path
) -> None:
    sha = _ready(github_server)
    github_server.fail(MERGE, 409)
    assert _merge(github_server, tmp_path, sha).returncode == 3
    again = _merge(github_server, tmp_path, sha, ident=2)  # another approval: decided again
    assert again.returncode == 0, again.stdout + again.stderr
    state = json.loads((tmp_path / "s" / "state.json").read_text())
    records = state["records"]
    # The wait is lifted, and the pull request closes on the merge that merged it.
    assert [k for k, r in records.items() if k.startswith("wait:") and not r.get("deleted")] == []
    assert records["closure:pull_request:2"]["data"]["closure_outcome"] == "completed"
    assert github_server.count(MERGE) == 2
