"""A small simulated Actions step for `holon action` tests (the shared harness is H7's
`tests/support/actions_env.py`): a real event file from GitHub's examples rewritten to the
loopback fake's repository, real GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and the step run
as its own process."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.gateway.conftest import example

REPO = "octocat/Hello-World"
REPO_ID = "1296269"
TOKEN = "ghs_" + "f" * 36  # the github_server fixture's token
LOGIN = "github-actions[bot]"
ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples/solve/project"
_RECORD = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)<<(ghadelimiter_[0-9a-f-]+)\n")


def payload(
    event: str, action: str | None = None, **changes: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """GitHub's example payload for `event`.`action`, its repository the fake's."""
    data = example(event, action)
    repository = data.get("repository")
    if isinstance(repository, dict):
        repository.update(full_name=REPO, name="Hello-World", id=int(REPO_ID))
        owner = repository.get("owner")
        if isinstance(owner, dict):
            owner["login"] = "octocat"
    for change in changes.values():
        change(data)
    return data


def project(tmp: Path) -> Path:
    """The demo project as a git repository (the workspace a checkout would leave)."""
    repo = tmp / "workspace"
    shutil.copytree(PROJECT, repo)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "project"], check=True)
    return repo


@dataclass
class Step:
    tmp: Path
    event: str
    payload: dict[str, Any]
    server: Any = None
    workspace: Path | None = None
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.output = self.tmp / "github_output"
        self.summary_file = self.tmp / "step_summary.md"
        self.event_path = self.tmp / "event.json"
        self.runner_temp = self.tmp / "runner_temp"
        self.runner_temp.mkdir(exist_ok=True)
        self.output.touch()
        self.summary_file.touch()

    def environ(self, **extra: str) -> dict[str, str]:
        self.event_path.write_text(json.dumps(self.payload))
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "HOLON_", "ACTIONS_", "RUNNER_"))
        }
        env.update(
            GITHUB_ACTIONS="true",
            GITHUB_EVENT_NAME=self.event,
            GITHUB_EVENT_PATH=str(self.event_path),
            GITHUB_REPOSITORY=REPO,
            GITHUB_REPOSITORY_ID=REPO_ID,
            GITHUB_RUN_ID="4242",
            GITHUB_RUN_ATTEMPT="1",
            GITHUB_SERVER_URL="https://github.com",
            GITHUB_REF="refs/heads/main",
            GITHUB_WORKFLOW_REF=f"{REPO}/.github/workflows/holon.yml@refs/heads/main",
            GITHUB_ACTOR="octocat",
            GITHUB_OUTPUT=str(self.output),
            GITHUB_STEP_SUMMARY=str(self.summary_file),
            GITHUB_WORKSPACE=str(self.workspace or self.tmp),
            RUNNER_TEMP=str(self.runner_temp),
            HOLON_RUNTIME="local",
            HOLON_GITHUB_WRITE_SPACING="0",
        )
        if self.server is not None:
            env.update(GITHUB_API_URL=self.server.url, GITHUB_TOKEN=TOKEN)
        env.update(self.env)
        env.update(extra)
        return env

    def run(self, **extra: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "holon", "action"]
        return subprocess.run(
            argv, env=self.environ(**extra), capture_output=True, text=True, timeout=180
        )

    def outputs(self) -> dict[str, str]:
        return parse_outputs(self.output.read_text())

    def summary(self) -> str:
        return self.summary_file.read_text()

    @property
    def state_dir(self) -> Path:
        return self.runner_temp / "holon" / "state"


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT's `name<<delimiter` records, as the runner reads them."""
    found: dict[str, str] = {}
    at = 0
    while at < len(text):
        match = _RECORD.match(text, at)
        assert match is not None, f"not an output record at {at}: {text[at : at + 80]!r}"
        name, mark = match.groups()
        end = text.index(f"\n{mark}\n", match.end() - 1)
        found[name] = text[match.end() : end]
        at = end + len(mark) + 2
    return found
