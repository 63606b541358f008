"""The README's main job, `scripts/demo`, tells the whole offline story and tells it truly: the
failing test, the agent's recorded commands with their real exit codes, the run judged
`finished`, the fix in the patch, and the pull request publishing would open."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.docker
def test_the_main_job_runs_offline_and_reports_the_fix() -> None:
    done = subprocess.run(
        [str(REPO / "scripts" / "demo")],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home())},
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "FAILED (failures=1)" in out  # the project before Holon
    assert "holon-agent-local:" in out  # in a container: the image built from local parts
    assert "command 1: python3 -m unittest -v  -> exit 1" in out
    assert "command 2: python3 -m unittest -v  -> exit 0" in out
    assert '"outcome": "success"' in out
    assert "+    return a + b" in out
    assert "Outcome: finished (closure completed" in out
    assert "command 2 `python3 -m unittest -v` exited 0" in out  # the handoff's evidence
    assert "draft pull request: Fix #1: add() returns the difference instead of the sum" in out
    assert "modify calc.py" in out
