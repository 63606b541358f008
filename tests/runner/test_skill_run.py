"""A run's skills: their folders reach the agent's input, their artifacts and requirements are
checked after it (schemas with jsonschema, no link followed)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.errors import InvalidInput
from holon.runner import RunRequest, run
from holon.runner.backend import Job
from holon.skills.catalog import Skill, default_catalog, load_skill
from tests.conftest import spec_for
from tests.runner.test_run_fake_backend import FakeBackend

SUCCESS = {"status": "completed", "outcome": "success"}
FINDING = {"path": "tracked.txt", "line": 1, "severity": "nit", "message": "m", "suggestion": ""}


def _skill(name: str) -> Skill:
    skill = default_catalog().get(name)
    assert skill is not None
    return skill


def _agent(files: dict[str, Any], manifest: dict[str, Any] = SUCCESS, edit: bool = False) -> Any:
    """An agent writing `files` (str/bytes/JSON-able; a Path value becomes a symlink to it)."""

    def act(job: Job) -> int:
        out = job.paths.output
        for name, value in files.items():
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(value, Path):
                target.symlink_to(value)
            elif isinstance(value, bytes):
                target.write_bytes(value)
            else:
                target.write_text(value if isinstance(value, str) else json.dumps(value))
        if edit:
            (job.paths.workspace / "tracked.txt").write_text("changed\n")
        (out / "manifest.json").write_text(json.dumps(manifest))
        return {"success": 0, "failure": 1, "needs_human": 2}[manifest["outcome"]]

    return FakeBackend(act)


def _run(repo: Path, out: Path, backend: FakeBackend, *names: str, **kw: Any) -> Any:
    skills = [_skill(n) for n in names]
    request = RunRequest(
        spec=spec_for("skill"), workspace=repo, output=out, runtime="local", skills=skills, **kw
    )
    return run(request, backend=backend)


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(dirty=False)


def test_skill_folders_reach_the_agents_input(repo: Path, tmp_path: Path) -> None:
    seen: dict[str, bytes] = {}

    def act(job: Job) -> int:
        top = job.paths.input / "skills"
        for path in sorted(top.rglob("*")):
            if path.is_file():
                seen[str(path.relative_to(top))] = path.read_bytes()
        out = job.paths.output
        (out / "review.json").write_text(json.dumps([FINDING]))
        (out / "review.md").write_text("ok")
        (out / "manifest.json").write_text(json.dumps(SUCCESS))
        return 0

    result = _run(repo, tmp_path / "out", FakeBackend(act), "github-review")
    assert result.exit_code == 0, result.reason
    shipped = _skill("github-review").directory
    assert shipped is not None
    assert set(seen) == {
        "github-review/SKILL.md",
        "github-review/prompt.md.j2",
        "github-review/schemas/review.schema.json",
    }
    assert seen["github-review/prompt.md.j2"] == (shipped / "prompt.md.j2").read_bytes()


def test_a_symlink_in_a_skill_folder_is_refused_before_anything_runs(
    repo: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "skills" / "lint"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: lint\ndescription: d\n---\n")
    skill = load_skill(folder)
    (folder / "notes.md").symlink_to("/etc/passwd")  # smuggled in after it was resolved
    backend = _agent({})
    out = tmp_path / "out"
    request = RunRequest(
        spec=spec_for("x"), workspace=repo, output=out, runtime="local", skills=[skill]
    )
    with pytest.raises(InvalidInput, match=r"notes\.md is a symlink"):
        run(request, backend=backend)
    assert backend.jobs == []
    assert not out.exists()


def test_a_host_skill_is_not_given_to_an_agent(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="github-publish runs on the host"):
        _run(repo, tmp_path / "out", _agent({}), "github-publish")


def test_valid_artifacts_pass(repo: Path, tmp_path: Path) -> None:
    backend = _agent({"review.json": [FINDING], "review.md": "Looks right."})
    result = _run(repo, tmp_path / "out", backend, "github-review")
    assert (result.status, result.outcome) == ("completed", "success")
    assert result.violations == []


def test_a_missing_required_artifact_fails_a_claimed_success(repo: Path, tmp_path: Path) -> None:
    result = _run(repo, tmp_path / "out", _agent({"review.md": "x"}), "github-review")
    assert result.outcome == "failure"
    assert result.reason == "required artifact(s) missing: review.json"
    assert result.missing_artifacts == ["review.json"]


def test_a_question_without_the_artifacts_stays_a_question(repo: Path, tmp_path: Path) -> None:
    asked = {**SUCCESS, "outcome": "needs_human", "question": {"id": "q", "text": "Which?"}}
    result = _run(repo, tmp_path / "out", _agent({}, asked), "github-review", "github-issue-solve")
    assert (result.outcome, int(result.exit_code)) == ("needs_human", 2)


@pytest.mark.parametrize(
    ("files", "says"),
    [
        (
            {"review.json": "[{", "review.md": "x"},
            "github-review artifact review.json: invalid JSON",
        ),
        (
            {"review.json": [{**FINDING, "line": 0}], "review.md": "x"},
            "github-review artifact review.json: does not match its schema at /0/line: "
            "0 is less than the minimum of 1",
        ),
        (
            {"review.json": [{**FINDING, "severity": "warning"}], "review.md": "x"},
            "review.json: does not match its schema at /0/severity",
        ),
        (
            {"review.json": {"comments": []}, "review.md": "x"},
            "review.json: does not match its schema at /: ",
        ),
        (
            {"review.json": [FINDING], "review.md": Path("/etc/hostname")},
            "github-review artifact review.md: review.md is a symlink",
        ),
        (
            {"review.json": Path("/etc/passwd"), "review.md": "x"},
            "github-review artifact review.json: review.json is a symlink",
        ),
        ({"review.json": b'["\xff"]', "review.md": "x"}, "review.json: invalid JSON"),
    ],
)
def test_invalid_artifacts_fail_the_run_naming_artifact_and_path(
    repo: Path, tmp_path: Path, files: dict[str, Any], says: str
) -> None:
    result = _run(repo, tmp_path / "out", _agent(files), "github-review")
    assert (result.status, result.outcome, int(result.exit_code)) == ("failed", "failure", 1)
    assert result.reason.startswith("contract violation: ")
    assert says in result.reason
    assert "\n" not in result.reason
    assert result.closure.lifecycle_outcome == "failed"


def test_a_symlinked_json_artifact_is_never_read(repo: Path, tmp_path: Path) -> None:
    # A link to a file that *is* valid for the schema is still refused, not followed.
    valid = tmp_path / "valid.json"
    valid.write_text(json.dumps([FINDING]))
    result = _run(
        repo, tmp_path / "out", _agent({"review.json": valid, "review.md": "x"}), "github-review"
    )
    assert result.outcome == "failure"
    assert "review.json is a symlink" in result.reason


def test_a_required_change_with_an_empty_patch_fails(repo: Path, tmp_path: Path) -> None:
    result = _run(repo, tmp_path / "out", _agent({"summary.md": "done"}), "github-issue-solve")
    assert (result.status, result.outcome) == ("failed", "failure")
    assert result.reason == "github-issue-solve requires a change, but the patch is empty"


def test_a_required_change_with_a_change_succeeds(repo: Path, tmp_path: Path) -> None:
    backend = _agent({"summary.md": "done"}, edit=True)
    result = _run(repo, tmp_path / "out", backend, "github-issue-solve")
    assert (result.status, result.outcome) == ("completed", "success"), result.reason
    assert result.patch.bytes > 0


def test_an_honest_failure_without_a_change_keeps_its_reason(repo: Path, tmp_path: Path) -> None:
    failed = {"status": "failed", "outcome": "failure", "error": "tests still fail"}
    result = _run(repo, tmp_path / "out", _agent({"summary.md": "x"}, failed), "github-issue-solve")
    assert result.reason == "the agent reported failure: tests still fail"


def test_a_broken_schema_is_invalid_input_before_the_run(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "lint"
    (folder / "s").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: lint\ndescription: d\nartifacts:\n  - path: o.json\n    schema: s/o.json\n---\n"
    )
    (folder / "s" / "o.json").write_text('{"type": "no-such-type"}')
    backend = _agent({})
    with pytest.raises(
        InvalidInput, match=r"skill lint: s/o\.json: not a valid JSON Schema at type"
    ):
        run(
            RunRequest(
                spec=spec_for("x"),
                workspace=repo,
                output=tmp_path / "out",
                runtime="local",
                skills=[load_skill(folder)],
            ),
            backend=backend,
        )
    assert backend.jobs == []


def test_a_repository_skill_with_a_schema_is_enforced(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "lint"
    (folder / "s").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: lint\ndescription: d\nartifacts:\n  - path: out/o.json\n"
        "    required: true\n    schema: s/o.json\n---\n"
    )
    (folder / "s" / "o.json").write_text('{"type": "object", "required": ["ok"]}')
    skill = load_skill(folder)

    def go(document: Any, out: str) -> Any:
        return run(
            RunRequest(
                spec=spec_for("x"),
                workspace=repo,
                output=tmp_path / out,
                runtime="local",
                skills=[skill],
            ),
            backend=_agent({"out/o.json": document}),
        )

    assert go({"ok": 1}, "a").outcome == "success"
    bad = go({}, "b")
    assert "lint artifact out/o.json: does not match its schema at /: 'ok' is a required" in (
        bad.reason
    )
    assert os.path.isdir(tmp_path / "b" / "out")


def test_the_requests_skills_are_validated_by_the_skill_model(tmp_path: Path) -> None:
    """Loaded only when a request has skills (run.py), the skill models still validate them:
    a declaration becomes a Skill, a wrong one is refused naming where, a Skill stays itself."""
    from pydantic import ValidationError

    def request(skills: Any) -> RunRequest:
        return RunRequest(
            spec=spec_for("fake"), workspace=tmp_path, output=tmp_path / "o", skills=skills
        )

    review = _skill("github-review")
    assert request([review]).skills == [review]
    assert request([]).skills == []
    made = request([{"name": "mine", "description": "d"}]).skills
    assert [type(s) for s in made] == [Skill]
    assert made[0].name == "mine"
    with pytest.raises(ValidationError) as refused:
        request([{"name": "mine", "description": "d", "nope": 1}])
    assert {e["loc"] for e in refused.value.errors()} == {("skills", 0, "nope")}
    with pytest.raises(ValidationError, match="valid list"):
        request("github-review")
