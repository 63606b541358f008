"""`.github/workflows/holon.yml` keeps the fan-out's promises (docs/fan-out.md): the run jobs
hold no write token and no secret but the model keys, every job's permissions are its own, the
numbers agree with Holon's (artifact retention, the matrix limit, the default image)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from holon import __version__
from holon.actions.config import IMAGE
from holon.actions.run_intake import ARTIFACT_PREFIX, artifact_name
from holon.state.model import DEFAULT_RETENTION

WORKFLOW = Path(__file__).resolve().parents[2] / ".github/workflows/holon.yml"


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


def _uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job["steps"] if str(s.get("uses", "")).startswith(action + "@")]


def test_it_is_reusable_with_nothing_granted_by_default() -> None:
    data = _workflow()
    assert "workflow_call" in data[True]  # YAML 1.1 reads `on` as true
    assert data["permissions"] == {}
    assert set(data["jobs"]) == {"decide", "run", "settle"}


def test_the_run_jobs_hold_no_write_token_and_only_the_model_keys() -> None:
    run = _workflow()["jobs"]["run"]
    assert run["permissions"] == {"contents": "read"}
    assert run["strategy"]["fail-fast"] is False
    assert run["strategy"]["matrix"] == "${{ fromJSON(needs.decide.outputs.matrix) }}"
    assert run["container"]["image"] == "${{ inputs.agent_image }}"
    text = yaml.safe_dump(run)
    assert "github.token" not in text
    assert "GITHUB_TOKEN" not in text
    secrets = {v for s in run["steps"] for v in (s.get("env") or {}).values() if "secrets." in v}
    assert secrets == {"${{ secrets.anthropic_api_key }}", "${{ secrets.openai_api_key }}"}
    for step in run["steps"]:
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
    names = [s.get("name", "") for s in run["steps"]]
    kill = names.index("stop every leftover process")
    (upload,) = _uses(run, "actions/upload-artifact")
    assert kill < run["steps"].index(upload)
    assert "kill -KILL -1" in run["steps"][kill]["run"]
    assert upload["if"] == "always()"
    assert upload["with"]["name"] == artifact_name("${{ matrix.run }}", "${{ github.run_attempt }}")
    assert upload["with"]["retention-days"] == 3


def test_settle_always_runs_and_keeps_state_within_the_prune_horizon() -> None:
    settle = _workflow()["jobs"]["settle"]
    assert settle["if"] == "always()"
    assert settle["needs"] == ["decide", "run"]
    (state,) = [s for s in _uses(settle, "actions/upload-artifact") if "state" in s["name"]]
    assert state["with"]["retention-days"] * 86400 < DEFAULT_RETENTION.total_seconds()
    env = next(s["env"] for s in settle["steps"] if s.get("id") == "settle")
    assert env["HOLON_MODE"] == "settle"
    assert env["HOLON_MATRIX"] == "${{ needs.decide.outputs.matrix }}"


def test_no_input_reaches_a_script_as_an_expression() -> None:
    for job in _workflow()["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step


def test_the_default_image_is_this_releases() -> None:
    inputs = _workflow()[True]["workflow_call"]["inputs"]
    assert inputs["agent_image"]["default"] == f"{IMAGE}:{__version__}"


def test_re_runs_name_artifacts_by_attempt_and_settle_hears_decides_result() -> None:
    jobs = _workflow()["jobs"]
    assert jobs["decide"]["outputs"]["attempt"] == "${{ github.run_attempt }}"
    # A re-run of failed jobs keeps a decide that succeeded: its artifacts, by its attempt.
    (bundles,) = _uses(jobs["run"], "actions/download-artifact")
    assert bundles["with"]["name"].endswith("-${{ needs.decide.outputs.attempt }}")
    settle = jobs["settle"]
    decided, outputs = _uses(settle, "actions/download-artifact")
    assert "needs.decide.outputs.attempt" in decided["with"]["name"]
    assert outputs["with"]["pattern"] == ARTIFACT_PREFIX + "a*"
    env = next(s["env"] for s in settle["steps"] if s.get("id") == "settle")
    assert env["HOLON_DECIDE_RESULT"] == "${{ needs.decide.result }}"


def test_only_the_run_jobs_check_out_the_commit_decide_chose() -> None:
    jobs = _workflow()["jobs"]
    # The run job: the matrix entry's commit (a pull request's head, a fork's too), through
    # `with:`, never a script; its token is not persisted.
    (checkout,) = _uses(jobs["run"], "actions/checkout")
    assert checkout["with"] == {"ref": "${{ matrix.ref }}", "persist-credentials": False}
    # The trusted jobs check out the event's own commit (no ref) and Holon at holon_ref.
    for name in ("decide", "settle"):
        for step in _uses(jobs[name], "actions/checkout"):
            ref = step["with"].get("ref")
            assert ref is None or step["with"].get("repository") == "holon-run/holon", step
            assert "matrix." not in yaml.safe_dump(step)
