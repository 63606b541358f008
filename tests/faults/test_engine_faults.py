"""The engine in trouble, in the `/holon solve` story (tests/faults/story.py): the model provider
answering a storm of 429s, a body that is not JSON, an answer cut short, and one that does not
answer in time (never, too late, stalled mid-body) or breaks off mid-body. The run fails, the
agent's manifest says so naming the problem, the comment's handoff is `failed` (never
`finished`), no pull request is opened, the step ends in time, and the model key is in no
record."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from docker.models.containers import Container

from holon.errors import Unavailable
from holon.runner import RunRequest, run
from holon.runner.docker_backend import RUN_LABEL
from holon.runner.engine import Engine, EngineLost, ExitWait
from tests.conftest import spec_for
from tests.faults.model_faults import MODEL_FAULTS, TIMEOUT_FAULTS, ModelFault, faulty_model
from tests.faults.story import (
    Story,
    assert_exit_clean,
    assert_state_valid,
    first_step,
    outputs,
)
from tests.support.github_fake.loopback import LoopbackGitHub

TOKEN = "ghs_" + "f" * 36
MODEL_KEY = "sk-" + "q" * 40
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
            "OPENAI_API_KEY": MODEL_KEY,
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


# The agent reaches the fake through the run's key proxy (a unix socket), whose own upstream
# timeouts are long: the agent's timeouts (HOLON_MODEL_*) are the ones that end the wait.
TIMEOUTS = {"HOLON_MODEL_READ_TIMEOUT": "500ms", "HOLON_MODEL_RETRIES": "1"}
# What the manifest and the handoff name (the agent's origin is the proxy's placeholder).
TIMED_OUT = {
    "silent": "openai: no answer from http://model-proxy within the read timeout of 0.5s",
    "slow": "openai: no answer from http://model-proxy within the read timeout of 0.5s",
    "stall_mid_body": (
        "openai: answer from http://model-proxy stalled: no data within the read timeout of 0.5s"
    ),
    "cut_mid_body": "openai: answer from http://model-proxy broke off",
}


def _files_holding(root: Path, secret: str) -> list[str]:
    return [
        str(path)
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink() and secret.encode() in path.read_bytes()
    ]


def _assert_no_key(story: Story) -> None:
    step, done = story.first, story.first_done
    places = _files_holding(step.runner_temp, MODEL_KEY)
    # `::add-mask::` lines are the runner's, consumed and never shown.
    shown = [line for line in done.stdout.splitlines() if not line.startswith("::add-mask::")]
    places += [
        n for n, t in (("stdout", "\n".join(shown)), ("stderr", done.stderr)) if MODEL_KEY in t
    ]
    places += [f"comment {i}" for i, c in enumerate(story.comments()) if MODEL_KEY in c]
    assert not places, places


@pytest.mark.parametrize("mode", [*TIMEOUT_FAULTS, "cut_mid_body"])
def test_a_provider_that_does_not_answer_in_time_fails_the_run_naming_the_timeout(
    tmp_path: Path, mode: ModelFault
) -> None:
    with faulty_model(mode) as model, LoopbackGitHub(token=TOKEN) as server:
        env = {
            "HOLON_ENGINE": "builtin",
            "HOLON_MODEL": "gpt-fake-1",
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": MODEL_KEY,
            **TIMEOUTS,
        }
        started = time.monotonic()
        story = first_step(tmp_path, server, env=env)
        elapsed = time.monotonic() - started
        done = story.first_done
        assert done.returncode == 1, done.stdout + done.stderr
        # Per run two reads of 0.5 s and a backoff of at most 1 s, over a step of about 6 s.
        assert elapsed < 30, elapsed
        assert not story.pulls()
        assert story.outcome() == "failed", story.comments()
        assert_state_valid(story.first.state_dir)
    said = outputs(story.first)
    (run,) = json.loads(said["runs"])
    assert (run["status"], run["outcome"]) == ("failed", "failure")
    # The policy's attempts (max_attempts 2), each run asking twice (HOLON_MODEL_RETRIES=1):
    # every request reached the fake once through the proxy, none more.
    output = Path(str(run["output"]))
    attempts = sorted(output.parent.glob(output.name.rsplit("-", 1)[0] + "-*"))
    assert len(attempts) == 2, attempts
    assert len(model.requests) == 2 * len(attempts), model.requests
    manifest = json.loads((output / "manifest.json").read_text())
    assert manifest["outcome"] == "failure", manifest
    detail = json.loads(said["handoff"])["closure"]["detail"]
    for told in (str(manifest.get("error")), detail):
        assert TIMED_OUT[mode] in told, told
        assert "(gave up after 2 attempts in " in told, told
    assert said["lifecycle_outcome"] == "failed"
    assert "the provider failed" in story.comments()[0]
    _assert_no_key(story)
    # An answer that came after the agent gave up is metered, never a traceback on stderr.
    assert "Traceback" not in done.stderr, done.stderr
    assert_exit_clean(done)


# -- Docker ----------------------------------------------------------------------------------
def _docker_request(
    image: str, workspace: Path, output: Path, mode: str = "success", **kw: Any
) -> RunRequest:
    return RunRequest(
        spec=spec_for(mode),
        workspace=workspace,
        output=output,
        runtime="docker",
        image=image,
        work_dir=output.parent,
        **kw,
    )


@pytest.mark.docker
def test_a_missing_image_fails_the_run_naming_it(
    docker_client: Any, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    missing = "holon-test/no-such-image:never-built"
    try:
        result = run(_docker_request(missing, make_repo(), tmp_path / "out"))
    except Unavailable as exc:
        reason = str(exc)
    else:
        assert result.status == "failed", result
        reason = str(result.reason)
    assert missing in reason
    assert "not in the local Docker engine" in reason


@pytest.mark.docker
def test_a_container_killed_by_its_memory_limit_fails_naming_it(
    agent_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # busybox: a shell variable grown past the 8 MB limit; the kernel kills the container.
    hog = ["/bin/sh", "-c", "x=$(head -c 200000000 /dev/zero | tr '\\000' a); echo ${#x}"]
    result = run(
        _docker_request(agent_image, make_repo(), tmp_path / "out", memory="8m", agent=hog)
    )
    assert result.status == "failed", result
    assert result.agent_exit_code == 137
    assert result.reason is not None
    assert "killed by its memory limit (OOM, --memory 8m)" in result.reason, result.reason
    assert result.closure is not None
    assert result.closure.closure_outcome == "failed"
    assert "OOM" in str(result.closure.detail)


def _engine_lost(*args: Any, **kwargs: Any) -> Any:
    """The Docker engine going away under a call (a restart): the SDK's connection error."""
    time.sleep(0.5)  # mid-run: the agent is running
    raise requests.exceptions.ConnectionError(
        "('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))"
    )


def _engine_lost_fast(*args: Any, **kwargs: Any) -> Any:
    """The same loss on the fast path's own connection (holon/runner/engine.py)."""
    time.sleep(0.5)
    raise EngineLost(
        "('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))"
    )


def _exit_lost(self: ExitWait, timeout: float) -> Any:
    """The wait asked before the start loses the engine: its connection ends with it."""
    self.close()
    _engine_lost_fast()


def _lose_engine(monkeypatch: pytest.MonkeyPatch, *calls: str) -> None:
    """The engine lost under each of `calls` (wait, stop, remove), by whichever client makes
    it: the SDK's container model, or the fast path's requests on the engine's socket."""
    fast: dict[str, list[tuple[type, str, Callable[..., Any]]]] = {
        "wait": [(ExitWait, "result", _exit_lost), (Engine, "wait", _engine_lost_fast)],
        "remove": [(Engine, "remove", _engine_lost_fast)],
    }
    for name in calls:
        monkeypatch.setattr(Container, name, _engine_lost)
        for owner, attr, lost in fast.get(name, []):
            monkeypatch.setattr(owner, attr, lost)


def _containers(docker_client: Any, run_id: str) -> list[Any]:
    return list(docker_client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={run_id}"}))


@pytest.mark.docker
def test_the_engine_restarting_mid_run_fails_the_run_and_reaps_the_container(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The wait for the agent (mode `sleep`: 300 s) loses the engine; the engine is back for
    # the stop and the removal, which end the container.
    _lose_engine(monkeypatch, "wait")
    started = time.monotonic()
    request = _docker_request(agent_image, make_repo(), tmp_path / "out", "sleep", timeout=120)
    result = run(request)
    assert time.monotonic() - started < 30  # no hang on the lost wait
    assert result.status == "failed", result
    assert "the runtime failed: lost the Docker engine while waiting for the agent" in str(
        result.reason
    )
    assert "Connection reset by peer" in str(result.reason)
    assert result.closure is not None
    assert result.closure.closure_outcome == "failed"
    assert _containers(docker_client, result.run_id) == []


@pytest.mark.docker
def test_the_engine_gone_for_good_ends_the_run_and_names_the_leftover(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every call after the start fails: the run still ends (failed), promptly, and says which
    # container it could not remove (labelled with the run id, for an operator or a sweep).
    _lose_engine(monkeypatch, "wait", "stop", "remove")
    request = _docker_request(agent_image, make_repo(), tmp_path / "out", "sleep", timeout=120)
    started = time.monotonic()
    result = run(request)
    assert time.monotonic() - started < 30
    monkeypatch.undo()
    leftovers = _containers(docker_client, result.run_id)
    try:
        assert result.status == "failed", result
        assert "lost the Docker engine" in str(result.reason)
        assert len(leftovers) == 1
        assert any(
            n.startswith(f"could not remove container {leftovers[0].id[:12]}") for n in result.notes
        ), result.notes
    finally:
        for container in leftovers:
            container.remove(force=True)
