"""Quality gates for Holon's Actions YAML, offline: `action.yml`, `.github/workflows/` and
`examples/workflows/` pass actionlint (with shellcheck over every `run:`), zizmor and GitHub's
workflow and action schemas with zero findings, and `action.yml` keeps the shape the design fixes
(every input reaching `holon action` as its environment variable, the outputs, the pins, the state
artifact's retention). Each gate is also shown to fail on a planted finding.

actionlint does not read action definitions, so `action.yml`'s scripts go to shellcheck directly.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from holon.state.model import DEFAULT_RETENTION

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ACTION = REPO / "action.yml"
ZIZMOR_CONFIG = REPO / ".github" / "zizmor.yml"
EXAMPLES = ("cron.yml", "fan-out.yml", "issue-commands.yml", "minimal.yml", "pr-review.yml")

# The design's environment table: each action input and the variable `holon action` reads.
INPUT_ENV = {
    "github_token": "GITHUB_TOKEN",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "openai_api_key": "OPENAI_API_KEY",
    "policy": "HOLON_POLICY",
    "mode": "HOLON_MODE",
    "runtime": "HOLON_RUNTIME",
    "agent_image": "HOLON_AGENT_IMAGE",
    "engine": "HOLON_ENGINE",
    "model": "HOLON_MODEL",
    "mention": "HOLON_MENTION",
    "allowed_bots": "HOLON_ALLOWED_BOTS",
    "dry_run": "HOLON_DRY_RUN",
    "intents_per_pass": "HOLON_INTENTS_PER_PASS",
    "reactivation_budget": "HOLON_REACTIVATION_BUDGET",
    "fail_on_waiting": "HOLON_FAIL_ON_WAITING",
}
# The design's outputs, fan-out's two included.
OUTPUTS = {
    "closure_outcome",
    "waiting_reason",
    "lifecycle_outcome",
    "runs",
    "comment_url",
    "handoff",
    "usage",
    "matrix",
    "has_runs",
}
# The agent's own directories are never set by the action (the design's rule).
AGENT_ONLY = {"HOLON_INPUT_DIR", "HOLON_WORKSPACE_DIR", "HOLON_OUTPUT_DIR"}
# Holon's examples name Holon by its major tag (see .github/zizmor.yml); nothing else may.
HOLON_REF = re.compile(r"holon-run/holon(/[^@]+)?@v\d+")
PINNED = re.compile(r"[^@\s]+@[0-9a-f]{40}")
EXPRESSION = "${{"


def _workflows() -> list[Path]:
    found = sorted((REPO / ".github" / "workflows").glob("*.yml"))
    found += sorted((REPO / "examples" / "workflows").glob("*.yml"))
    return found


def _everything() -> list[Path]:
    return [ACTION, *_workflows()]


def _run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, check=False, timeout=120
    )


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), path
    return data


# --- the gates -----------------------------------------------------------------------------


def _zizmor(*paths: Path) -> subprocess.CompletedProcess[str]:
    return _run(
        BIN / "zizmor",
        "--offline",
        "--no-progress",
        "--strict-collection",
        "--config",
        ZIZMOR_CONFIG,
        *paths,
    )


def _actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    # shellcheck from the test extra's wheel, named by path: actionlint then checks every `run:`.
    return _run(
        BIN / "actionlint", "-no-color", "-shellcheck", BIN / "shellcheck", "-pyflakes=", *paths
    )


def _schema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    return _run(BIN / "check-jsonschema", f"--builtin-schema=vendor.{schema}", path)


def _shellcheck(script: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    tmp.write_text(script)
    return _run(BIN / "shellcheck", "--shell=bash", "--severity=style", tmp)


def test_there_is_everything_to_lint() -> None:
    found = _workflows()
    assert ACTION.is_file()
    assert REPO / ".github" / "workflows" / "ci.yml" in found
    assert REPO / ".github" / "workflows" / "release.yml" in found
    assert {p.name for p in found if p.parent.name == "workflows" and "examples" in p.parts} >= {
        *EXAMPLES
    }


def test_zizmor_finds_nothing() -> None:
    done = _zizmor(*_everything())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr
    for path in _everything():  # every file was audited, none skipped
        assert f"completed {path.relative_to(REPO)}" in done.stderr or str(path) in done.stderr


def test_actionlint_finds_nothing() -> None:
    done = _actionlint(*_workflows())
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("workflow", _workflows(), ids=lambda p: p.name)
def test_workflows_follow_githubs_schema(workflow: Path) -> None:
    done = _schema("github-workflows", workflow)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_action_follows_githubs_schema() -> None:
    done = _schema("github-actions", ACTION)
    assert done.returncode == 0, done.stdout + done.stderr


def _action_scripts() -> Iterator[tuple[str, str]]:
    for index, step in enumerate(_load(ACTION)["runs"]["steps"]):
        if "run" in step:
            yield step.get("id", f"step {index}"), step["run"]


@pytest.mark.parametrize(
    ("step", "script"), list(_action_scripts()), ids=[s for s, _ in _action_scripts()]
)
def test_the_actions_scripts_pass_shellcheck(step: str, script: str, tmp_path: Path) -> None:
    done = _shellcheck(script, tmp_path / "script.sh")
    assert done.returncode == 0, f"{step}: {done.stdout}{done.stderr}"


# --- each gate can fail ----------------------------------------------------------------------


def test_zizmor_would_catch_an_unpinned_action(tmp_path: Path) -> None:
    text = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace("@11bd71901bbe5b1630ceea73d27597364c9af683", "@v4"))
    done = _zizmor(bad)
    assert done.returncode != 0
    assert "unpinned-uses" in done.stdout + done.stderr


def test_zizmor_would_catch_an_input_expanded_in_a_script(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    text = ACTION.read_text().replace(
        """run: 'exec "$HOLON_BIN" action'""",
        """run: 'exec "$HOLON_BIN" action --mode ${{ inputs.mode }}'""",
        1,
    )
    assert text != ACTION.read_text()
    action.write_text(text)
    done = _zizmor(action)
    assert done.returncode != 0
    assert "template-injection" in done.stdout + done.stderr


def test_zizmors_policy_lets_only_holon_use_a_tag(tmp_path: Path) -> None:
    text = (REPO / "examples" / "workflows" / "minimal.yml").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace("holon-run/holon@v1", "someone/else@v1"))
    done = _zizmor(bad)
    assert done.returncode != 0
    assert "unpinned-uses" in done.stdout + done.stderr


def test_actionlint_would_catch_a_workflow_mistake(tmp_path: Path) -> None:
    text = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace("timeout-minutes: 20", "timeout-minutes: ${{ github.nonsense }}"))
    done = _actionlint(bad)
    assert done.returncode != 0
    assert "nonsense" in done.stdout


def test_actionlint_runs_shellcheck_over_scripts(tmp_path: Path) -> None:
    text = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace("run: .ci/run", "run: cd $HOME/$WHERE; .ci/run"))
    done = _actionlint(bad)
    assert done.returncode != 0
    assert "shellcheck" in done.stdout
    assert "SC2086" in done.stdout


def test_the_schemas_would_catch_a_malformed_file(tmp_path: Path) -> None:
    workflow = tmp_path / "bad.yml"
    workflow.write_text(
        (REPO / ".github" / "workflows" / "ci.yml").read_text().replace("runs-on:", "runs_on:")
    )
    assert _schema("github-workflows", workflow).returncode != 0
    action = tmp_path / "action.yml"
    action.write_text(ACTION.read_text().replace("using: composite", "using: compost"))
    assert _schema("github-actions", action).returncode != 0


def test_shellcheck_would_catch_an_unquoted_variable(tmp_path: Path) -> None:
    done = _shellcheck('cp "$A" $RUNNER_TEMP/x\n', tmp_path / "script.sh")
    assert done.returncode != 0
    assert "SC2086" in done.stdout


# --- the shape of action.yml ---------------------------------------------------------------


def _steps(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if "runs" in doc:
        yield from doc["runs"].get("steps", [])
    for job in (doc.get("jobs") or {}).values():
        yield from job.get("steps", [])


def _jobs_uses(doc: dict[str, Any]) -> Iterator[str]:
    for job in (doc.get("jobs") or {}).values():
        if "uses" in job:
            yield job["uses"]


def expressions_in_scripts(doc: dict[str, Any]) -> list[str]:
    """One line per `run:` holding an expression: its value would be parsed by a shell."""
    return [
        f"step {step.get('id') or step.get('name') or '?'}: {step['run'].strip()[:60]}"
        for step in _steps(doc)
        if EXPRESSION in str(step.get("run", ""))
    ]


def unpinned(doc: dict[str, Any], *, allow_holon_tag: bool) -> list[str]:
    """Every `uses:` that is not a full commit (local `./` actions excepted; a docker image must
    be named by digest); Holon's own major tag only where allowed (the examples)."""
    bad = []
    for ref in [*(s["uses"] for s in _steps(doc) if "uses" in s), *_jobs_uses(doc)]:
        if ref.startswith("./"):
            continue
        if ref.startswith("docker://"):
            if "@sha256:" not in ref:
                bad.append(ref)
            continue
        if PINNED.fullmatch(ref):
            continue
        if allow_holon_tag and HOLON_REF.fullmatch(ref):
            continue
        bad.append(ref)
    return bad


def _holon_step(doc: dict[str, Any]) -> dict[str, Any]:
    found = [s for s in doc["runs"]["steps"] if s.get("id") == "holon"]
    assert len(found) == 1
    return found[0]


def inputs_not_passed(doc: dict[str, Any]) -> list[str]:
    """One line per design input that does not reach the `holon` step as its variable."""
    env = _holon_step(doc).get("env", {})
    problems = []
    for name, var in INPUT_ENV.items():
        if name not in doc.get("inputs", {}):
            problems.append(f"input {name} is missing")
        elif f"inputs.{name}" not in str(env.get(var, "")):
            problems.append(f"input {name} does not reach the holon step as {var}")
    return problems


def state_retention_days(doc: dict[str, Any]) -> list[int]:
    """retention-days of every upload of a `holon-state-` artifact."""
    return [
        int(step["with"]["retention-days"])
        for step in _steps(doc)
        if "upload-artifact" in step.get("uses", "")
        and str(step.get("with", {}).get("name", "")).startswith("holon-state-")
    ]


def test_every_input_and_output_is_described() -> None:
    doc = _load(ACTION)
    for kind in ("inputs", "outputs"):
        for name, spec in doc[kind].items():
            assert str(spec.get("description", "")).strip(), f"{kind} {name} has no description"
    assert doc["branding"]["icon"]
    assert doc["branding"]["color"]
    assert doc["runs"]["using"] == "composite"


def test_every_input_reaches_holon_action_as_the_designs_variable() -> None:
    doc = _load(ACTION)
    assert inputs_not_passed(doc) == []
    assert set(doc["inputs"]) == set(INPUT_ENV)
    env = _holon_step(doc)["env"]
    assert env["HOLON_PHASE"] == "main"
    assert not AGENT_ONLY & set(env)
    assert doc["inputs"]["github_token"]["required"] is True


def test_inputs_not_passed_can_fail() -> None:
    doc = _load(ACTION)
    del _holon_step(doc)["env"]["HOLON_MENTION"]
    _holon_step(doc)["env"]["HOLON_DRY_RUN"] = "${{ inputs.mode }}"
    assert inputs_not_passed(doc) == [
        "input mention does not reach the holon step as HOLON_MENTION",
        "input dry_run does not reach the holon step as HOLON_DRY_RUN",
    ]


def test_the_outputs_are_the_designs_and_come_from_the_holon_step() -> None:
    """Each output is the main step's, else the cleanup step's: a main step cancelled or
    failed before it wrote any leaves the ones of the cleanup that settled what it left."""
    doc = _load(ACTION)
    assert set(doc["outputs"]) == OUTPUTS
    for name, spec in doc["outputs"].items():
        assert spec["value"] == (
            f"${{{{ steps.holon.outputs.{name} || steps.cleanup.outputs.{name} }}}}"
        )


def test_both_phases_know_the_default_branch_from_the_event_through_env() -> None:
    """Whether the run may merge the ref-scoped cache: the default branch, from the event,
    as an environment variable (never an expression inside the script)."""
    doc = _load(ACTION)
    steps = {s.get("id"): s for s in doc["runs"]["steps"]}
    for step_id in ("holon", "cleanup"):
        step = steps[step_id]
        assert step["env"]["HOLON_DEFAULT_BRANCH"] == (
            "${{ github.event.repository.default_branch }}"
        )
        assert EXPRESSION not in step["run"]


def test_a_cleanup_step_always_settles() -> None:
    steps = _load(ACTION)["runs"]["steps"]
    ids = [s.get("id") for s in steps]
    cleanup = steps[ids.index("cleanup")]
    assert ids.index("cleanup") > ids.index("holon")
    assert str(cleanup["if"]).startswith("always()")
    assert cleanup["env"]["HOLON_PHASE"] == "cleanup"
    assert cleanup["run"] == _holon_step(_load(ACTION))["run"]
    # Settling runs no agent: the model keys stay out of it.
    assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} & set(cleanup["env"])
    # The state is saved after the cleanup, so it includes what the cleanup settled.
    uploads = [i for i, s in enumerate(steps) if "upload-artifact" in s.get("uses", "")]
    assert uploads
    assert min(uploads) > ids.index("cleanup")


def test_the_state_cache_is_read_and_written_on_the_default_branch_only() -> None:
    steps = _load(ACTION)["runs"]["steps"]
    default_branch = (
        "github.ref == format('refs/heads/{0}', github.event.repository.default_branch)"
    )
    restore = [s for s in steps if "actions/cache/restore@" in s.get("uses", "")]
    assert len(restore) == 1
    assert default_branch in restore[0]["if"]
    stage = [s for s in steps if s.get("id") == "stage-cache"]
    assert len(stage) == 1
    assert default_branch in stage[0]["if"]
    save = [s for s in steps if "actions/cache/save@" in s.get("uses", "")]
    assert len(save) == 1
    assert "steps.stage-cache.outputs.ready == 'true'" in save[0]["if"]
    # actions/cache finds an entry only under the path it was saved from.
    assert save[0]["with"]["path"] == restore[0]["with"]["path"]
    assert _holon_step(_load(ACTION))["env"]["HOLON_CACHE_DIR"] == restore[0]["with"]["path"]


@pytest.mark.parametrize("path", _everything(), ids=lambda p: p.name)
def test_no_expression_inside_a_script(path: Path) -> None:
    assert expressions_in_scripts(_load(path)) == []


def test_expressions_in_scripts_can_fail() -> None:
    doc = {"jobs": {"j": {"steps": [{"name": "x", "run": "echo ${{ github.event.issue.title }}"}]}}}
    assert expressions_in_scripts(doc) == ["step x: echo ${{ github.event.issue.title }}"]


@pytest.mark.parametrize("path", _everything(), ids=lambda p: p.name)
def test_every_uses_is_pinned_to_a_commit(path: Path) -> None:
    examples = path.parent == REPO / "examples" / "workflows"
    assert unpinned(_load(path), allow_holon_tag=examples) == []


def test_unpinned_can_fail() -> None:
    doc = {
        "jobs": {
            "a": {"uses": "holon-run/holon/.github/workflows/holon.yml@v1"},
            "b": {
                "steps": [
                    {"uses": "actions/checkout@v4"},
                    {"uses": "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af68"},
                    {"uses": "docker://alpine:3"},
                    {"uses": "holon-run/holon@v1"},
                ]
            },
        }
    }
    assert unpinned(doc, allow_holon_tag=False) == [
        "actions/checkout@v4",
        "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af68",
        "docker://alpine:3",
        "holon-run/holon@v1",
        "holon-run/holon/.github/workflows/holon.yml@v1",
    ]
    assert unpinned(doc, allow_holon_tag=True) == [
        "actions/checkout@v4",
        "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af68",
        "docker://alpine:3",
    ]


def test_the_state_artifact_outlives_no_tombstone() -> None:
    # Kept no longer than the state's prune horizon: an artifact older than a pruned tombstone
    # would bring the record back.
    horizon = DEFAULT_RETENTION.days
    found = state_retention_days(_load(ACTION))
    reusable = REPO / ".github" / "workflows" / "holon.yml"
    if reusable.is_file():
        found += state_retention_days(_load(reusable))
    assert found
    assert all(1 <= days <= horizon for days in found), (found, horizon)


def test_state_retention_days_can_fail() -> None:
    doc = _load(ACTION)
    for step in doc["runs"]["steps"]:
        if str(step.get("with", {}).get("name", "")).startswith("holon-state-"):
            step["with"]["retention-days"] = 90
    assert max(state_retention_days(doc)) > DEFAULT_RETENTION.days


def test_examples_ask_for_least_privilege_and_queue_per_subject() -> None:
    subject = "holon-${{ github.event.issue.number || github.event.pull_request.number || "
    for name in EXAMPLES:
        doc = _load(REPO / "examples" / "workflows" / name)
        assert doc["permissions"] == {}, name
        for job_name, job in doc["jobs"].items():
            assert job.get("permissions"), f"{name}: job {job_name} names no permissions"
            assert "write-all" not in str(job["permissions"])
        concurrency = doc["concurrency"]
        assert concurrency["cancel-in-progress"] is False, name
        if name != "cron.yml":  # a tick has no subject
            assert concurrency["group"].startswith(subject), name


# --- the user docs say what the files say ---------------------------------------------------

DOCS = REPO / "docs" / "action.md"


def test_the_quick_start_is_the_minimal_example() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)
    assert blocks
    assert yaml.safe_load(blocks[0]) == _load(REPO / "examples" / "workflows" / "minimal.yml")


def test_the_docs_list_every_input_and_output() -> None:
    doc = _load(ACTION)
    text = DOCS.read_text()
    for name, var in INPUT_ENV.items():
        assert f"| `{name}` | `{var}` |" in text, name
    for name in doc["outputs"]:
        assert f"| `{name}` |" in text, name
    for example in EXAMPLES:
        assert f"(../examples/workflows/{example})" in text, example


_LEVEL = {"none": 0, "read": 1, "write": 2}


def call_problems(caller: dict[str, Any], callee: dict[str, Any]) -> list[str]:
    """One line per way the caller's jobs that call `callee` (a reusable workflow) do not fit
    it: a `with:` or `secrets:` key it does not declare, a required one not passed, or a
    permission one of its jobs asks for beyond what the calling job grants (GitHub refuses
    such a run before any job starts)."""
    call = callee[True]["workflow_call"]  # YAML 1.1 reads `on` as true
    inputs, secrets = call.get("inputs") or {}, call.get("secrets") or {}
    asked: dict[str, int] = {}
    for job in callee["jobs"].values():
        for scope, level in (job.get("permissions") or {}).items():
            asked[scope] = max(asked.get(scope, 0), _LEVEL[level])
    problems = []
    for name, job in caller["jobs"].items():
        if "holon.yml@" not in str(job.get("uses", "")):
            continue
        given, passed = job.get("with") or {}, job.get("secrets") or {}
        problems += [
            f"{name}: with {k} is not an input of holon.yml" for k in given if k not in inputs
        ]
        problems += [
            f"{name}: required input {k} is not passed"
            for k, spec in inputs.items()
            if spec.get("required") and k not in given
        ]
        if passed != "inherit":
            problems += [
                f"{name}: secret {k} is not a secret of holon.yml"
                for k in passed
                if k not in secrets
            ]
            problems += [
                f"{name}: required secret {k} is not passed"
                for k, spec in secrets.items()
                if spec.get("required") and k not in passed
            ]
        granted = job.get("permissions") or {}
        names = {v: k for k, v in _LEVEL.items()}
        for scope, level in sorted(asked.items()):
            has = str(granted.get(scope, "none"))
            if _LEVEL[has] < level:
                problems.append(
                    f"{name}: holon.yml's jobs ask for {scope}: {names[level]}, granted {has}"
                )
    return problems


def test_the_fan_out_example_calls_holon_yml_as_it_is_declared() -> None:
    callee = _load(REPO / ".github" / "workflows" / "holon.yml")
    assert call_problems(_load(REPO / "examples" / "workflows" / "fan-out.yml"), callee) == []


def test_call_problems_can_fail() -> None:
    callee = _load(REPO / ".github" / "workflows" / "holon.yml")
    callee[True]["workflow_call"]["inputs"]["holon_ref"]["required"] = True
    caller = {
        "jobs": {
            "h": {
                "uses": "holon-run/holon/.github/workflows/holon.yml@v1",
                "with": {"max_paralel": 2},
                "secrets": {"anthropic_key": "x"},
                "permissions": {"contents": "write", "actions": "read"},
            }
        }
    }
    problems = call_problems(caller, callee)
    assert "h: with max_paralel is not an input of holon.yml" in problems
    assert "h: required input holon_ref is not passed" in problems
    assert "h: secret anthropic_key is not a secret of holon.yml" in problems
    assert "h: holon.yml's jobs ask for actions: write, granted read" in problems
    assert "h: holon.yml's jobs ask for checks: write, granted none" in problems
