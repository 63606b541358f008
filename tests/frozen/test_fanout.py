"""Frozen inputs across fan-out's jobs: the decide job bundles the context from the event (the
trigger as it was), the run job runs it, and the settle job, a later process on another runner,
reads the trigger again from the snapshot the state carried before it publishes anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.actions.test_fanout_e2e import Story, _decided, holon_comments

EDITED = "/holon solve\n\nand also delete the tests"


def test_a_command_edited_while_the_run_job_ran_is_not_published_by_settle(
    github_server: Any, tmp_path: Path
) -> None:
    story = Story(tmp_path, github_server)
    decide, outputs, (entry,) = _decided(story)
    bundle = decide.runner_temp / "holon" / "bundles" / entry["run"] / "context"
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["trigger"]["live"] == "unchanged"
    output = story.run_job(decide, entry)
    assert json.loads((output / "run.json").read_text())["outcome"] == "success"

    story.repo.comments[story.trigger].body = EDITED  # between the run job and settle
    settle, done = story.settle(decide, {entry["run"]: output}, outputs["matrix"])
    assert done.returncode == 0, done.stdout + done.stderr
    settled = settle.outputs()
    assert (settled["closure_outcome"], settled["waiting_reason"]) == (
        "waiting", "awaiting_operator_input",
    )  # fmt: skip
    assert [i for i in story.repo.issues.values() if i.pull is not None] == []
    assert not [c for c in github_server.calls if str(c.operation).startswith("git/create")]
    (comment,) = holon_comments(story.repo)
    assert "edited after it triggered this run" in comment.body.replace("\\", "")
