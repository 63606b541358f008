"""Holon's own workflows (and, as they are added, `action.yml` and `examples/workflows/`) pass
zizmor's security audits and validate against GitHub's workflow and action schemas, offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _workflows() -> list[Path]:
    found = sorted((REPO / ".github" / "workflows").glob("*.yml"))
    found += sorted((REPO / "examples" / "workflows").glob("*.yml"))
    return found


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)


def test_there_are_workflows_to_lint() -> None:
    assert REPO / ".github" / "workflows" / "ci.yml" in _workflows()


def test_zizmor_finds_nothing() -> None:
    targets = [str(p) for p in _workflows()]
    if (REPO / "action.yml").is_file():
        targets.append(str(REPO / "action.yml"))
    done = _run(str(BIN / "zizmor"), "--offline", "--no-progress", *targets)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr


@pytest.mark.parametrize("workflow", _workflows(), ids=lambda p: p.name)
def test_workflows_follow_githubs_schema(workflow: Path) -> None:
    schema = "--builtin-schema=vendor.github-workflows"
    done = _run(str(BIN / "check-jsonschema"), schema, str(workflow))
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_would_catch_an_unpinned_action(tmp_path: Path) -> None:
    # The gate can fail: the same workflow with a tag instead of a commit is a finding.
    text = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace("@11bd71901bbe5b1630ceea73d27597364c9af683", "@v4"))
    done = _run(str(BIN / "zizmor"), "--offline", "--no-progress", str(bad))
    assert done.returncode != 0
    assert "unpinned-uses" in done.stdout + done.stderr
