"""The simulated Actions step itself (tests/support/actions_env.py): what it gives the process,
the files it reads back and the events it writes are what a runner and GitHub give, so the
stories in this directory test `holon action`, not the harness."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from holon.actions.files import write_outputs
from holon.gateway.github import normalize
from holon.state.model import Record, ServeState
from holon.state.store import StateStore
from tests.support.actions_env import (
    REPO,
    TOKEN,
    ActionsEnv,
    MalformedOutput,
    merge_states,
    parse_outputs,
)
from tests.support.github_fake.loopback import LoopbackGitHub

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_step_gets_what_a_runner_gives_and_none_of_the_test_process_secrets(
    github_server: LoopbackGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-of-the-test-process-0123456789")
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "runtime-token-of-the-test-process")
    env = ActionsEnv(tmp_path, github_server)
    given = env.env()
    assert "ANTHROPIC_API_KEY" not in given
    assert "ACTIONS_RUNTIME_TOKEN" not in given
    assert given["GITHUB_TOKEN"] == TOKEN
    assert given["GITHUB_API_URL"] == github_server.url
    assert given["GITHUB_REPOSITORY"] == REPO
    assert given["GITHUB_REPOSITORY_ID"] == "1296269"  # the fake's repository id
    assert Path(given["GITHUB_OUTPUT"]).is_file()
    assert Path(given["GITHUB_STEP_SUMMARY"]).is_file()
    assert Path(given["RUNNER_TEMP"]).is_dir()
    assert given["HOLON_AGENT"].endswith("/bin/holon agent")
    # Python reads the environment it is given: the child sees exactly this.
    child = subprocess.run(
        [given["HOLON_AGENT"].split()[0].replace("/holon", "/python"), "-c",
         "import os, json; print(json.dumps(sorted(os.environ)))"],
        env=given, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert set(json.loads(child.stdout)) <= set(given) | {"LC_CTYPE"}


def test_the_workspace_is_a_checkout_of_the_fake_that_knows_its_commit(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    env = ActionsEnv(tmp_path, github_server)
    head = subprocess.run(
        ["git", "-C", str(env.workspace), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert env.repo.refs["heads/main"] == head
    assert sorted(env.repo.files(head)) == [".gitignore", "README.md", "calc.py", "test_calc.py"]
    assert (env.workspace / "calc.py").read_bytes() == (
        Path(__file__).resolve().parents[2] / "examples/solve/project/calc.py"
    ).read_bytes()
    # A second job of the same test checks out the same commit without seeding again.
    other = ActionsEnv(tmp_path, github_server, name="other")
    assert env.repo.refs["heads/main"] == head == other.checkout("main")
    assert (other.workspace / "calc.py").read_text() == (env.workspace / "calc.py").read_text()


def test_events_are_octokit_examples_aimed_at_the_fake_and_normalize(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    env = ActionsEnv(tmp_path, github_server)
    issue = env.add_issue()
    env.comment_event(issue.number, "/holon solve")
    payload = json.loads(env.event_file.read_text())
    assert "Codertocat/Hello-World" not in json.dumps(payload)
    assert (payload["repository"]["full_name"], payload["issue"]["number"]) == (REPO, 1)
    envelope = normalize(
        env.event_name, payload, via="actions", received_at=NOW, run_id="1", repository=REPO
    )
    assert envelope.command is not None
    assert envelope.command.name == "solve"
    assert envelope.actor is not None
    assert envelope.actor.login == "octocat"
    pull = env.repo.add_pull("Fix #1", head="main")
    env.review_event(pull.number, "changes_requested", "Please handle it.")
    review = json.loads(env.event_file.read_text())
    assert review["pull_request"]["head"]["sha"] == env.repo.refs["heads/main"]
    normalize(env.event_name, review, via="actions", received_at=NOW, repository=REPO)


def test_outputs_are_read_strictly(github_server: LoopbackGitHub, tmp_path: Path) -> None:
    env = ActionsEnv(tmp_path, github_server)
    write_outputs(env.env(), {"closure_outcome": "completed", "runs": "[\n]", "empty": ""})
    assert env.outputs() == {"closure_outcome": "completed", "runs": "[\n]", "empty": ""}
    for bad in (
        "name=value\n",  # the single-line form: Holon never writes it (a value could end it)
        "a<<ghadelimiter_1\nvalue\n",  # never closed
        "a<<EOF\nvalue\nEOF\n",  # a guessable delimiter
        "a<<ghadelimiter_1\n1\nghadelimiter_1\na<<ghadelimiter_2\n2\nghadelimiter_2\n",  # twice
        "a<<ghadelimiter_1\n1\nghadelimiter_1",  # no final newline
    ):
        with pytest.raises(MalformedOutput):
            parse_outputs(bad)


def test_states_merge_as_artifacts_would(tmp_path: Path) -> None:
    def state(directory: Path, key: str, line: str) -> Path:
        directory.mkdir()
        state = ServeState()
        state.put(Record(kind="meta", key=key, status="done", updated_at=NOW, writer="t"))
        StateStore(directory).save(state)
        (directory / "events.ndjson").write_text(json.dumps({"id": line, "at": "x"}) + "\n")
        return directory

    merge_states(
        tmp_path / "m", [state(tmp_path / "a", "one", "1"), state(tmp_path / "b", "two", "2")]
    )
    merged = StateStore(tmp_path / "m").load()
    assert sorted(r.key for r in merged.records.values()) == ["one", "two"]
    assert len((tmp_path / "m" / "events.ndjson").read_text().splitlines()) == 2


def test_state_is_carried_to_the_next_run_without_its_lock(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    first = ActionsEnv(tmp_path, github_server, name="first")
    first.state_dir.mkdir(parents=True)
    state = ServeState()
    state.put(Record(kind="meta", key="k", status="done", updated_at=NOW, writer="t"))
    StateStore(first.state_dir).save(state)
    (first.state_dir / "state.lock").write_text("123")
    following = ActionsEnv(tmp_path, github_server, name="following")
    first.state_between_runs(following)
    assert StateStore(following.state_dir).load() == state
    assert not (following.state_dir / "state.lock").exists()
    assert following.env()["HOLON_STATE_DIR"] == str(following.state_dir)
