"""How a step ends when the work does not finish: `/holon stop` (userinterlude, and how to
restart), a failing skill (failed, with evidence, exit 1) and a cancelled job (the `always()`
cleanup phase settles the comment; no run ends silent)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import time
from pathlib import Path

from tests.e2e_actions.conftest import (
    Steps,
    agent_script,
    assert_all_outputs,
    assert_no_secret,
    pulls,
)
from tests.support.actions_env import cancel
from tests.support.github_fake.loopback import LoopbackGitHub

FAILING = """
import sys
print("FAIL: test_add (test_calc.CalcTest.test_add): -1 != 5", file=sys.stderr)
sys.exit(3)
"""
SLOW = """
import os, sys, time
with open(sys.argv[1], "a") as started:
    started.write(f"{os.getpid()}\\n")
time.sleep(120)
"""


def test_stop_leaves_the_subject_userinterlude_and_says_how_to_restart(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    step = steps()
    issue = step.add_issue()
    step.comment_event(issue.number, "/holon stop")
    done = step.run()
    assert done.returncode == 0, done.stdout + done.stderr  # waiting is not a failed job
    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert outputs["lifecycle_outcome"] == "userinterlude"
    assert outputs["closure_outcome"] == "waiting"
    assert outputs["waiting_reason"] == "awaiting_operator_input"
    assert json.loads(outputs["runs"]) == []
    (comment,) = step.holon_comments(issue.number)
    assert "**Outcome:** `userinterlude`" in comment
    assert "/holon" in comment, comment
    assert "restart" in comment, comment
    assert "userinterlude" in step.summary()
    assert not pulls(step.repo)
    assert_no_secret(step, done.stdout, done.stderr)


def test_a_failing_skill_fails_the_job_with_its_evidence(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    step = steps()
    issue = step.add_issue()
    step.extra["HOLON_AGENT"] = agent_script(tmp_path, FAILING)
    step.comment_event(issue.number, "/holon solve")
    done = step.run()
    assert done.returncode == 1, done.stdout + done.stderr
    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert (outputs["closure_outcome"], outputs["lifecycle_outcome"]) == ("failed", "failed")
    (run,) = json.loads(outputs["runs"])
    assert (run["skill"], run["subject"]) == ("github-issue-solve", "issue:1")
    assert run["outcome"] != "success"
    handoff = json.loads(outputs["handoff"])
    assert handoff["outcome"] == "failed"
    evidence = handoff["evidence"]
    assert evidence, handoff
    (comment,) = step.holon_comments(issue.number)
    assert "**Outcome:** `failed`" in comment
    summary = step.summary()
    for line in evidence:  # the Markdown escapes Holon adds to untrusted text aside
        assert _plain(line) in _plain(comment), (line, comment)
    assert any(_plain(line) in _plain(summary) for line in evidence), (evidence, summary)
    assert "failed" in summary
    assert not pulls(step.repo)  # nothing published
    assert step.repo.refs.keys() == {"heads/main"}
    assert_no_secret(step, done.stdout, done.stderr)


def test_a_cancelled_job_settles_its_comment_in_the_cleanup_phase(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    step = steps()
    issue = step.add_issue()
    started = tmp_path / "agent-started"
    step.extra["HOLON_AGENT"] = agent_script(tmp_path, SLOW) + f" {started}"
    step.comment_event(issue.number, "/holon solve")
    proc = step.start()
    ended_by = ""
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), proc.communicate(timeout=10)
        # The run is under way: the progress comment is up.
        (working,) = step.holon_comments(issue.number)
        assert "`working`" in working
        ended_by = cancel(proc)  # the runner's cancel: SIGINT, SIGTERM, then kill
        proc.communicate(timeout=10)
        agents = _pids(started)
        outlived = [pid for pid in agents if _alive(pid)]
        _kill(agents)  # the runner kills what is left of the step's process tree

        # The `always()` step: same runner temp and state, its own GITHUB_OUTPUT.
        step.new_step()
        step.extra["HOLON_PHASE"] = "cleanup"
        done = step.run()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        _kill(_pids(started))
        if ended_by == "SIGKILL":
            # A killed process cannot remove its temp dirs (the runner's machine is discarded).
            _remove_run_roots()
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (comment,) = step.holon_comments(issue.number)  # the same comment, settled
    assert "`working`" not in comment, comment
    assert "**Outcome:** `" in comment
    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert outputs["closure_outcome"] in ("failed", "waiting"), outputs
    assert outputs["lifecycle_outcome"], outputs
    (holon_comment,) = [c for c in step.repo.comments.values() if c.body == comment]
    assert outputs["comment_url"].endswith(f"#issuecomment-{holon_comment.id}")
    assert not pulls(step.repo)
    assert_no_secret(step, done.stdout, done.stderr)
    # The main phase itself answered the runner's signals: it ended before being killed, and
    # its agent with it (a run left going holds the model key until the machine is gone).
    assert ended_by != "SIGKILL", "holon action ignored SIGINT and SIGTERM (killed after 10 s)"
    assert len(agents) == 1, f"the cancelled run was started again ({len(agents)} agents)"
    assert not outlived, "the agent kept running after holon action ended"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _remove_run_roots() -> None:
    temp = Path(os.environ["TMPDIR"])
    for path in temp.iterdir():
        if path.name.startswith("holon-"):
            shutil.rmtree(path, ignore_errors=True)


def _plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def _pids(started: Path) -> list[int]:
    return [int(x) for x in started.read_text().split()] if started.exists() else []


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
