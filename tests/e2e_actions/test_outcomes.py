"""How a step ends when the work does not finish: `/holon stop` (userinterlude, and how to
restart), a failing skill (failed, with evidence, exit 1) and a cancelled job (the `always()`
cleanup phase settles the comment; no run ends silent)."""

from __future__ import annotations

import contextlib
import json
import os
import re
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
from tests.support.actions_env import interrupt
from tests.support.github_fake.loopback import LoopbackGitHub

FAILING = """
import sys
print("FAIL: test_add (test_calc.CalcTest.test_add): -1 != 5", file=sys.stderr)
sys.exit(3)
"""
SLOW = """
import os, pathlib, sys, time
pathlib.Path(sys.argv[1]).write_text(str(os.getpid()))
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
    agent_pid = 0
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), proc.communicate(timeout=10)
        agent_pid = int(started.read_text())
        # The run is under way: the progress comment is up.
        (working,) = step.holon_comments(issue.number)
        assert "`working`" in working
        interrupt(proc)  # the runner's cancel: SIGINT, then SIGTERM
        proc.communicate(timeout=10)

        # The `always()` step: same runner temp and state, its own GITHUB_OUTPUT.
        step.new_step()
        step.extra["HOLON_PHASE"] = "cleanup"
        done = step.run()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        _kill(agent_pid)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (comment,) = step.holon_comments(issue.number)  # the same comment, settled
    assert "`working`" not in comment, comment
    assert "**Outcome:** `" in comment
    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert outputs["closure_outcome"] in ("failed", "waiting"), outputs
    assert outputs["lifecycle_outcome"], outputs
    assert outputs["comment_url"].endswith(
        f"#issuecomment-{next(c.id for c in step.repo.comments.values() if c.body == comment)}"
    )
    assert not pulls(step.repo)
    assert_no_secret(step, done.stdout, done.stderr)


def _plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def _kill(pid: int) -> None:
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
