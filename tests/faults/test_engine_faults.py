"""The engine in trouble, in the `/holon solve` story (tests/faults/story.py): the model provider
answering a storm of 429s, a body that is not JSON, an answer cut short. The run fails, the
agent's manifest says so naming the problem, the comment's handoff is `failed` (never
`finished`), no pull request is opened, and the step ends in time."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.faults.model_faults import MODEL_FAULTS, ModelFault, faulty_model
from tests.faults.story import assert_exit_clean, assert_state_valid, first_step, outputs
from tests.support.github_fake.loopback import LoopbackGitHub

TOKEN = "ghs_" + "f" * 36
# What the manifest or handoff names for each fault.
NAMED = {
    "rate_limit_storm": "HTTP 429 rate_limit_error: Slow down (gave up after 5 attempts",
    "garbled": "answer was not JSON (HTTP 200, 38 bytes)",
    "truncated": "answer was not JSON (HTTP 200, 60 bytes)",
}


@pytest.mark.parametrize("mode", MODEL_FAULTS)
def test_a_provider_in_trouble_fails_the_run_naming_it(tmp_path: Path, mode: ModelFault) -> None:
    with faulty_model(mode) as model, LoopbackGitHub(token=TOKEN) as server:
        env = {
            "HOLON_ENGINE": "builtin",
            "HOLON_MODEL": "gpt-fake-1",
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-" + "q" * 40,
        }
        started = time.monotonic()
        story = first_step(tmp_path, server, env=env)
        elapsed = time.monotonic() - started
        done = story.first_done
        assert model.requests, "the provider was never asked"
        assert_exit_clean(done)
        assert done.returncode == 1
        assert elapsed < 60  # the retry budget ends; nothing hangs
        assert not story.pulls()
        assert story.outcome() == "failed", story.comments()
        assert_state_valid(story.first.state_dir)
    # The agent's manifest: a failure naming the provider's problem, never success.
    said = outputs(story.first)
    (run,) = json.loads(said["runs"])
    assert (run["status"], run["outcome"]) == ("failed", "failure")
    manifest = json.loads((Path(str(run["output"])) / "manifest.json").read_text())
    assert manifest["outcome"] != "success", manifest
    assert NAMED[mode] in json.dumps(manifest), manifest
    # The handoff (comment and outputs) names it too.
    assert NAMED[mode] in json.loads(said["handoff"])["closure"]["detail"]
    assert said["lifecycle_outcome"] == "failed"
    assert "the provider failed" in story.comments()[0]
