from __future__ import annotations

from pathlib import Path

import pytest

from holon.contract.spec import Spec, load_spec, parse_spec
from holon.errors import InvalidInput

FULL = """\
version: v1
kind: Holon
metadata:
  name: fix-login
  id: run-42
  skills: [github-issue-solve]
context:
  workspace: ../repo
  files: [src/login.py, README.md]
  env:
    LOG_LEVEL: debug
    PORT: 8080
    VERBOSE: true
    BASE_SHA: 0123456789abcdef0123456789abcdef01234567
goal:
  description: Fix the login redirect loop
  issue_id: 42
output:
  artifacts:
    - path: diff.patch
      required: true
    - path: summary.md
constraints:
  timeout: 1h30m
  max_steps: 40
"""


def test_every_field() -> None:
    spec = parse_spec(FULL)
    assert spec.version == "v1"
    assert spec.kind == "Holon"
    assert spec.metadata.name == "fix-login"
    assert spec.metadata.id == "run-42"
    assert spec.metadata.skills == ["github-issue-solve"]
    assert spec.context.workspace == "../repo"
    assert spec.context.files == ["src/login.py", "README.md"]
    assert spec.context.env == {
        "LOG_LEVEL": "debug",
        "PORT": "8080",
        "VERBOSE": "true",
        "BASE_SHA": "0123456789abcdef0123456789abcdef01234567",
    }
    assert spec.goal.description == "Fix the login redirect loop"
    assert spec.goal.issue_id == "42"
    assert [(a.path, a.required) for a in spec.output.artifacts] == [
        ("diff.patch", True),
        ("summary.md", False),
    ]
    assert spec.constraints.timeout == 5400.0
    assert spec.constraints.max_steps == 40


def test_round_trips_through_yaml() -> None:
    spec = parse_spec(FULL)
    again = parse_spec(spec.to_yaml())
    assert again == spec
    assert "timeout: 5400s" in spec.to_yaml()


@pytest.mark.parametrize("version", ["v0.1", "v0.2"])
def test_legacy_versions_and_bare_artifacts(version: str) -> None:
    spec = parse_spec(
        f"version: {version}\nkind: Holon\ngoal: {{description: x}}\n"
        "output: {artifacts: [diff.patch, summary.md]}\nconstraints: {timeout: 600}\n"
    )
    assert spec.version == version
    assert [(a.path, a.required) for a in spec.output.artifacts] == [
        ("diff.patch", True),
        ("summary.md", True),
    ]
    assert spec.constraints.timeout == 600.0


def test_minimal_defaults() -> None:
    spec = parse_spec("version: v1\nkind: Holon\ngoal:\n  description: do it\n")
    assert spec.metadata.skills == []
    assert spec.context.env == {}
    assert spec.output.artifacts == []
    assert spec.constraints.timeout is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: v1\nkind: Holon\ngoal: {description: x\n", "invalid YAML at line"),
        ("- a\n- b\n", "expected a mapping"),
        ("version: v2\nkind: Holon\ngoal: {description: x}\n", "unsupported version 'v2'"),
        ("version: 1\nkind: Holon\ngoal: {description: x}\n", "unsupported version 1"),
        ("version: v1\nkind: Job\ngoal: {description: x}\n", "unknown kind 'Job'"),
        ("version: v1\nkind: Holon\n", "goal: Field required"),
        ("version: v1\nkind: Holon\ngoal: {description: ''}\n", "goal.description"),
        ("version: v1\nkind: Holon\ngoal: {description: x}\nextra: 1\n", "extra: Extra inputs"),
        ("version: v1\nkind: Holon\ngoal: {description: x, owner: me}\n", "goal.owner"),
        (
            "version: v1\nkind: Holon\ngoal: {description: x}\nconstraints: {timeout: soon}\n",
            "invalid duration 'soon'",
        ),
        (
            "version: v1\nkind: Holon\ngoal: {description: x}\nconstraints: {max_steps: 0}\n",
            "constraints.max_steps",
        ),
        (
            "version: v1\nkind: Holon\ngoal: {description: x}\noutput: {artifacts: [../x]}\n",
            "must be a relative path",
        ),
        (
            "version: v1\nkind: Holon\ngoal: {description: x}\ncontext: {files: [/etc/passwd]}\n",
            "must be a relative path",
        ),
        (
            "version: v1\nkind: Holon\ngoal: {description: x}\ncontext: {env: {1BAD: x}}\n",
            "not a valid environment variable name",
        ),
    ],
)
def test_bad_specs_give_one_line(text: str, message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_spec(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "gho_x1234567",
        "ghu_x1234567",
        "ghs_x1234567",
        "ghr_x1234567",
        "github_pat_11ABCDEFG",
        "sk-proj-abcdef",
        "sk-ant-api03-abcdef",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234-5678",
    ],
)
def test_secret_in_env_rejected_without_echo(secret: str) -> None:
    text = (
        "version: v1\nkind: Holon\ngoal: {description: x}\n"
        f"context: {{env: {{TOKEN: '{secret}'}}}}\n"
    )
    with pytest.raises(InvalidInput) as info:
        parse_spec(text)
    message = str(info.value)
    assert "TOKEN looks like a secret" in message
    assert secret not in message
    assert secret[6:] not in message


def test_load_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="spec file not found"):
        load_spec(tmp_path / "missing.yaml")
    with pytest.raises(InvalidInput, match="is a directory"):
        load_spec(tmp_path)
    path = tmp_path / "spec.yaml"
    path.write_text(FULL)
    assert isinstance(load_spec(path), Spec)
