"""The `/holon solve` story of tests/e2e_actions under GitHub faults: one `holon action` step
with the fault scheduled, then the job run again (the same event, attempt 2, the first attempt's
state restored, no fault), and what GitHub and the state hold afterwards.

Waits are short so a case costs about its two steps: no write spacing, no backoff before a read
is sent again, a one-second rate-limit ceiling (a longer `Retry-After` fails the call at once)
and a five-second request timeout (an answer that never comes does not hang the case).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from holon.state.journal import Journal
from holon.state.store import StateStore
from tests.support.actions_env import ActionsEnv
from tests.support.github_fake.faults import Fault
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.state import Issue

MARKER = "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->"
BRANCH = "holon/issue-1"
FAST = {
    "HOLON_GITHUB_WRITE_SPACING": "0",
    "HOLON_GITHUB_BACKOFF": "0",
    "HOLON_GITHUB_MAX_WAIT": "1s",
    "HOLON_GITHUB_TIMEOUT": "5s",
}
_OUTCOME = re.compile(r"\*\*Outcome:\*\* `([A-Za-z_]+)`")


@dataclass
class Story:
    first: ActionsEnv
    first_done: subprocess.CompletedProcess[str]
    again: ActionsEnv | None = None
    again_done: subprocess.CompletedProcess[str] | None = None
    number: int = 1  # the issue or pull request the story is about
    head: str | None = None  # a pull request story's head when the event came (the checkout)

    @property
    def last(self) -> ActionsEnv:
        return self.again or self.first

    def pulls(self) -> list[Issue]:
        return [i for i in self.first.repo.issues.values() if i.pull is not None]

    def comments(self) -> list[str]:
        return self.first.holon_comments(self.number)

    def outcome(self) -> str | None:
        """The outcome the one Holon comment on the issue reports (None without one)."""
        comments = self.comments()
        if not comments:
            return None
        found = _OUTCOME.search(comments[-1])
        return found.group(1) if found else "working" if "`working`" in comments[-1] else "?"


def first_step(
    tmp: Path, server: LoopbackGitHub, *faults: Fault, env: dict[str, str] | None = None
) -> Story:
    step = ActionsEnv(tmp, server, name="attempt-1")
    step.extra.update({**FAST, **(env or {})})
    issue = step.add_issue()
    step.comment_event(issue.number, "/holon solve")
    for fault in faults:
        server.faults.add(fault)
    done = step.run(timeout=90)
    server.faults.clear()
    return Story(step, done)


def run_again(tmp: Path, server: LoopbackGitHub, story: Story) -> Story:
    """The job re-run: attempt 2 of the same run, the same event, the first attempt's state."""
    again = ActionsEnv(tmp, server, name="attempt-2")
    again.extra.update(FAST)
    if "HOLON_AGENT" in story.first.extra:  # a pull request story's scripted agent
        again.extra["HOLON_AGENT"] = story.first.extra["HOLON_AGENT"]
    if story.head is not None:  # the job checks out the same commit again
        again.checkout(story.head)
    again.attempt = 2
    story.first.state_between_runs(again)
    again.event_name = story.first.event_name
    shutil.copyfile(story.first.event_file, again.event_file)
    story.again = again
    story.again_done = again.run(timeout=90)
    return story


def assert_state_valid(state_dir: Path) -> None:
    """The state's records load, and every journal reads without a corrupt line."""
    StateStore(state_dir).load()
    for path in sorted(state_dir.glob("*.ndjson")):
        list(Journal(path).read())


def assert_exit_clean(done: subprocess.CompletedProcess[str]) -> None:
    """A GitHub fault is the job's failure at worst: exit 0 or 1, never a bug's 70 or a
    traceback."""
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def summary(story: Story) -> dict[str, object]:
    return {
        "exit": [story.first_done.returncode]
        + ([story.again_done.returncode] if story.again_done else []),
        "comments": len(story.comments()),
        "pulls": len(story.pulls()),
        "outcome": story.outcome(),
    }


def outputs(step: ActionsEnv) -> dict[str, str]:
    try:
        return step.outputs()
    except FileNotFoundError:
        return {}


def runs(step: ActionsEnv) -> list[dict[str, object]]:
    text = outputs(step).get("runs") or "[]"
    value: list[dict[str, object]] = json.loads(text)
    return value
