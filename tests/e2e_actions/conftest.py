"""What the stories share: a factory of simulated steps against the loopback GitHub, agents
written as small scripts for the stories the replay session does not tell, and readers of what
the fake holds."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.actions_env import REPO, RUN_ID, SERVER_URL, TOKEN, ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.state import Issue, Pull, Repo

RUN_URL = f"{SERVER_URL}/{REPO}/actions/runs/{RUN_ID}"
HOLON = "github-actions[bot]"  # the login an Actions token writes as (the fake's)
OUTPUTS = (
    "closure_outcome",
    "waiting_reason",
    "lifecycle_outcome",
    "runs",
    "comment_url",
    "handoff",
)
Steps = Callable[..., ActionsEnv]


@pytest.fixture
def steps(github_server: LoopbackGitHub, tmp_path: Path) -> Steps:
    """`steps(name="job", **ActionsEnv kwargs)`: a new simulated job on the one fake."""

    def make(name: str = "job", **kw: Any) -> ActionsEnv:
        return ActionsEnv(tmp_path, github_server, name=name, **kw)

    return make


def agent_script(directory: Path, source: str, name: str = "agent.py") -> str:
    """`source` as the local runtime's agent command (HOLON_AGENT)."""
    path = directory / name
    path.write_text(source)
    return shlex.join([sys.executable, str(path)])


def pull_of(issue: Issue) -> Pull:
    assert issue.pull is not None
    return issue.pull


def pulls(repo: Repo) -> list[Issue]:
    return [i for i in repo.issues.values() if i.pull is not None]


def holon_checks(repo: Repo) -> list[dict[str, Any]]:
    return [run for run in repo.check_runs.values() if run["name"] == "Holon"]


def sent_bodies(server: LoopbackGitHub, operation: str) -> list[str]:
    """The comment bodies Holon sent with `operation` (each write, in order)."""
    return [json.loads(c.body)["body"] for c in server.calls if c.operation == operation]


def assert_no_secret(env: ActionsEnv, stdout: str, *texts: str, masked: bool = True) -> None:
    """The token is masked (`::add-mask::`, which the runner consumes and never shows) before
    any other line of the step's log (unless `masked` is False: a step refused before it
    began), and appears nowhere else."""
    lines = stdout.splitlines()
    masks = [i for i, line in enumerate(lines) if line == f"::add-mask::{TOKEN}"]
    if masked:
        assert masks, "the token was never masked"
        assert all(line.startswith("::add-mask::") for line in lines[: masks[0]])
    shown = [line for line in lines if not line.startswith("::add-mask::")]
    for text in ("\n".join(shown), *texts, env.summary(), env.output_file.read_text()):
        assert TOKEN not in text


def assert_all_outputs(outputs: dict[str, str]) -> None:
    """Every output of the design is written (empty when none), and the JSON ones parse."""
    missing = [name for name in OUTPUTS if name not in outputs]
    assert not missing, f"outputs not written: {missing} (got {sorted(outputs)})"
    assert isinstance(json.loads(outputs["runs"]), list)
    if outputs["handoff"]:
        assert isinstance(json.loads(outputs["handoff"]), dict)


def one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("::")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]
