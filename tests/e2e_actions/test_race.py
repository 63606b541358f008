"""Two runs racing on one subject: the maintainer says `/holon solve` twice and two jobs start
together, each with its own state (neither has seen the other's artifact yet). GitHub ends up
with one Holon comment and one pull request; the two states then merge, as restoring both
artifacts merges them, and a re-run on the merged state adds nothing."""

from __future__ import annotations

import subprocess

from tests.e2e_actions.conftest import Steps, assert_all_outputs, pull_of, pulls
from tests.support.actions_env import ActionsEnv, merge_states
from tests.support.github_fake.loopback import LoopbackGitHub


def _finish(step: ActionsEnv, proc: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_two_racing_runs_leave_one_comment_and_one_pull_request(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    first = steps("first", run_id="1001")
    second = steps("second", run_id="1002")
    issue = first.add_issue()
    first.comment_event(issue.number, "/holon solve")
    second.comment_event(issue.number, "/holon solve")
    procs = [(first, first.start()), (second, second.start())]
    results = [_finish(step, proc) for step, proc in procs]
    for done in results:
        assert done.returncode in (0, 1), done.stdout + done.stderr
    repo = first.repo
    comments = first.holon_comments(issue.number)
    assert len(comments) == 1, comments
    holon_pulls = [p for p in pulls(repo) if pull_of(p).head.startswith("holon/")]
    assert len(holon_pulls) == 1, [(p.number, pull_of(p).head) for p in holon_pulls]
    assert [r for r in repo.refs if r.startswith("heads/holon/")] == ["heads/holon/issue-1"]
    assert any(done.returncode == 0 for done in results)
    for step in (first, second):
        assert_all_outputs(step.outputs())

    # The artifacts of both runs restored and merged into the next run's state: the second
    # run's job re-run (attempt 2) finds the work done and adds nothing.
    rerun = steps("rerun", run_id="1002")
    rerun.attempt = 2
    merge_states(rerun.state_dir, [first.state_dir, second.state_dir])
    rerun.event_file.write_text(second.event_file.read_text())
    rerun.event_name = second.event_name
    writes = github_server.count("issues/create-comment") + github_server.count("pulls/create")
    done = rerun.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert github_server.count("issues/create-comment") + github_server.count("pulls/create") == (
        writes
    )
    assert len(rerun.holon_comments(issue.number)) == 1
    assert len([p for p in pulls(repo) if pull_of(p).head.startswith("holon/")]) == 1
    assert_all_outputs(rerun.outputs())
