"""holon/executor/handlers.py: the dry run names the exact effect and performs none; wait and noop
are Holon's own; GitHub effects and skill runs without an agent fail honestly; a skill run goes
through the Agent Contract runner (`local` runtime, a real agent process), is never run twice
for one attempt, and a failed one keeps its run reference."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from holon.closure.evidence import Question
from holon.executor.executor import GITHUB, INTERNAL, build_executor
from holon.executor.handlers import (
    DryRunHandler,
    InternalHandler,
    NotConfiguredHandler,
    result_of,
)
from holon.executor.result import ActionResult
from holon.intent import ActionIntent
from tests.conftest import python_agent
from tests.executor.conftest import ARGS, AT, REPO, SKILL, clock, intent, run_skill_handler

SUCCESS = {"status": "completed", "outcome": "success"}
HELLO_AGENT = [sys.executable, "-m", "holon.examples.hello_agent"]


def _effect(type_: str) -> dict[str, Any]:
    return {"effect": type_, "repo": REPO, "target": "issue:1", **ARGS[type_][1]}


@pytest.mark.parametrize("type_", [*GITHUB, "run_skill"])
def test_dry_run_records_the_exact_effect(type_: str) -> None:
    act = intent(type_)
    result = DryRunHandler(clock)(act, 2)
    assert result.model_dump(mode="json", exclude_defaults=True) == {
        "id": f"{act.id}:2",
        "intent_id": act.id,
        "type": type_,
        "subject": "issue:1",
        "attempt": 2,
        "status": "succeeded",
        "dry_run": True,
        "effect": _effect(type_),
        "at": AT.isoformat().replace("+00:00", "Z"),
    }


def test_a_dry_run_without_a_runner_journals_the_skill_run(tmp_path: Path) -> None:
    executor = build_executor(dry_run=True, clock=clock, run_skill=None)
    result = executor.execute(intent("run_skill"), 1)
    assert (result.status, result.dry_run, result.run_id) == ("succeeded", True, None)
    assert result.effect is not None
    assert result.effect["effect"] == "run_skill"


def test_a_dry_run_with_a_runner_runs_the_skill_and_previews_host_skills(tmp_path: Path) -> None:
    # A skill run touches only its own output directory, so a dry run still runs it; a host
    # skill (publishing) is shown by its preview, never performed.
    calls = tmp_path / "calls"
    handler = run_skill_handler(tmp_path, python_agent(tmp_path, SUCCESS, calls=calls))
    previewed: list[str] = []

    def preview(act: ActionIntent, attempt: int) -> ActionResult:
        previewed.append(act.id)
        return result_of(act, attempt, clock(), "succeeded", dry_run=True)

    executor = build_executor(
        dry_run=True,
        clock=clock,
        run_skill=handler,
        host_skills={"github-publish"},
        preview={"github-publish": preview},
        hosted={"github-publish": lambda act, n: pytest.fail("hosted in a dry run")},
    )
    result = executor.execute(intent("run_skill"), 1)
    assert (result.status, result.dry_run) == ("succeeded", False)
    assert calls.exists()
    publish = intent("run_skill", args={"skill": "github-publish", "inputs": {}})
    assert executor.execute(publish, 1).dry_run
    assert previewed == [publish.id]


@pytest.mark.parametrize("type_", INTERNAL)
def test_wait_and_noop_are_internal_effects_even_outside_a_dry_run(type_: str) -> None:
    act = intent(type_)
    for result in (
        InternalHandler(clock)(act, 1),
        build_executor(dry_run=False, clock=clock, run_skill=None).execute(act, 1),
    ):
        assert (result.status, result.dry_run, result.error) == ("succeeded", False, None)
        assert result.effect == _effect(type_)


@pytest.mark.parametrize("type_", GITHUB)
def test_github_effects_outside_a_dry_run_fail_saying_they_are_not_configured(type_: str) -> None:
    act = intent(type_)
    result = build_executor(dry_run=False, clock=clock, run_skill=None).execute(act, 1)
    assert (result.status, result.dry_run, result.effect) == ("failed", False, None)
    assert (
        result.error
        == "GitHub effects need GITHUB_TOKEN (and the repository); or run with --dry-run"
    )


def test_a_skill_run_without_an_agent_fails_saying_how_to_configure_one() -> None:
    result = build_executor(dry_run=False, clock=clock, run_skill=None).execute(
        intent("run_skill"), 1
    )
    assert (result.status, result.run_id) == ("failed", None)
    assert result.error == "no agent configured for skill runs: pass --agent or --image"


def test_not_configured_records_its_reason_on_the_attempt() -> None:
    act = intent("label")
    result = NotConfiguredHandler(clock, "no GitHub token")(act, 3)
    assert (result.id, result.attempt, result.status, result.error) == (
        f"{act.id}:3",
        3,
        "failed",
        "no GitHub token",
    )


# -- skill runs through the runner -----------------------------------------------------------


def test_a_skill_run_succeeds_with_its_run_reference(tmp_path: Path) -> None:
    handler = run_skill_handler(tmp_path, HELLO_AGENT)
    act = intent("run_skill")
    result = handler(act, 1)
    output = tmp_path / "runs" / f"{act.id}-1"
    assert (result.status, result.run_status, result.run_outcome, result.error) == (
        "succeeded",
        "completed",
        "success",
        None,
    )
    assert result.run_id == f"{act.id}-1"
    assert result.run_output_path == str(output)
    assert result.manifest_path == str(output / "manifest.json")
    assert json.loads((output / "manifest.json").read_text())["outcome"] == "success"
    # The agent was given the skill's goal.
    assert f"Goal: the goal of {SKILL}" in (output / "summary.md").read_text()


def test_a_failing_agent_is_a_failed_result_with_its_run_reference(tmp_path: Path) -> None:
    manifest = {"status": "failed", "outcome": "failure", "error": "tests did not pass"}
    handler = run_skill_handler(tmp_path, python_agent(tmp_path, manifest, exit_code=1))
    act = intent("run_skill")
    result = handler(act, 1)
    output = tmp_path / "runs" / f"{act.id}-1"
    record = json.loads((output / "run.json").read_text())
    assert (result.status, result.run_status, result.run_outcome) == ("failed", "failed", "failure")
    assert (result.run_id, result.run_output_path, result.manifest_path) == (
        f"{act.id}-1",
        str(output),
        str(output / "manifest.json"),
    )
    assert result.error == record["reason"]
    assert "tests did not pass" in result.error


def test_an_agents_question_travels_with_its_result(tmp_path: Path) -> None:
    manifest = {
        "status": "completed",
        "outcome": "needs_human",
        "question": {"id": "q-db", "text": "Which database?"},
    }
    handler = run_skill_handler(tmp_path, python_agent(tmp_path, manifest, exit_code=2))
    result = handler(intent("run_skill"), 1)
    assert (result.status, result.run_outcome) == ("succeeded", "needs_human")
    assert result.question == Question(id="q-db", text="Which database?")


def test_an_attempt_whose_output_exists_is_read_back_never_run_again(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    handler = run_skill_handler(tmp_path, python_agent(tmp_path, SUCCESS, calls=calls))
    act = intent("run_skill")
    first = handler(act, 1)
    assert calls.read_text().splitlines() == ["run"]
    again = handler(act, 1)  # as a restarted serve would, for the attempt it had started
    assert calls.read_text().splitlines() == ["run"]
    assert again == first
    handler(act, 2)  # another attempt is another run
    assert calls.read_text().splitlines() == ["run", "run"]


@pytest.mark.parametrize("record", [None, b"", b'{"run_id": "x"', b'{"run_id": "x"}'])
def test_an_attempt_cut_off_before_its_record_is_failed_as_interrupted_not_rerun(
    tmp_path: Path, record: bytes | None
) -> None:
    calls = tmp_path / "calls"
    handler = run_skill_handler(tmp_path, python_agent(tmp_path, SUCCESS, calls=calls))
    act = intent("run_skill")
    output = handler.output_for(act, 1)
    output.mkdir(parents=True)
    if record is not None:
        (output / "run.json").write_bytes(record)
    result = handler(act, 1)
    assert not calls.exists()
    assert (result.status, result.run_status, result.run_output_path) == (
        "failed",
        "interrupted",
        str(output),
    )
    assert result.error == "interrupted: the run was cut off before it recorded a result"


def test_a_run_that_cannot_start_is_failed_saying_why(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    handler = run_skill_handler(tmp_path, python_agent(tmp_path, SUCCESS, calls=calls))
    handler.workspace = tmp_path / "missing"
    result = handler(intent("run_skill"), 1)
    assert not calls.exists()
    assert (result.status, result.run_id) == ("failed", None)
    assert result.error == f"workspace is not a directory: {tmp_path / 'missing'}"


def test_a_host_skill_is_never_sent_to_an_agent(tmp_path: Path) -> None:
    from holon.skills.catalog import default_catalog, host_skills

    assert "github-publish" in host_skills(default_catalog())
    calls = tmp_path / "calls"
    handler = run_skill_handler(tmp_path, python_agent(tmp_path, SUCCESS, calls=calls))
    handler.host = host_skills(default_catalog())
    act = intent("run_skill", {"skill": "github-publish", "inputs": {"run": "r1"}})
    result = build_executor(dry_run=False, clock=clock, run_skill=handler).execute(act, 1)
    assert result.status == "failed"
    assert "host skill" in (result.error or "")
    assert not calls.exists()  # no agent started
