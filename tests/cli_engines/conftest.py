"""Fixtures of the CLI engine tests: fake CLIs on a PATH of their own, an in-memory Recorder,
a workspace and an output directory."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from holon.agent.conversation import Usage
from holon.agent.engine import Budgets, CommandRecord, EngineTask
from tests.cli_engines.fakes import CLAUDE, CODEX, install

ANTHROPIC_KEY = "sk-ant-api03-test-anthropic-key-0123456789"
OPENAI_KEY = "sk-proj-test-openai-key-0123456789"


class MemoryRecorder:
    """The Recorder protocol in memory; every entry must be JSON, as the real one writes it."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.commands: list[CommandRecord] = []
        self.usages: list[Usage] = []

    def transcript(self, entry: Mapping[str, Any]) -> None:
        self.entries.append(json.loads(json.dumps(entry)))

    def command(
        self,
        command: str,
        exit_code: int | None,
        *,
        duration: float,
        output: str,
        timed_out: bool = False,
    ) -> CommandRecord:
        record = CommandRecord(
            id=len(self.commands) + 1,
            command=command,
            exit_code=exit_code,
            timed_out=timed_out,
            duration=duration,
            output_tail=output[-2000:],
            truncated=len(output) > 2000,
        )
        self.commands.append(record)
        return record

    def usage(self, usage: Usage) -> None:
        self.usages.append(usage)

    def notes(self) -> list[str]:
        return [e["text"] for e in self.entries if e.get("kind") == "note"]

    def events(self) -> list[dict[str, Any]]:
        return [e["event"] for e in self.entries if e.get("kind") == "event"]


@dataclass
class Setup:
    root: Path
    bin: Path
    workspace: Path
    output: Path
    record: Path
    pids: Path
    env: dict[str, str] = field(default_factory=dict)

    def task(
        self,
        scenario: str,
        *,
        timeout: float | None = 30.0,
        max_turns: int = 12,
        max_tokens: int | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> EngineTask:
        command_env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.root / "home"),
            "LANG": "C.UTF-8",
            "FAKE_SCENARIO": scenario,
            "FAKE_RECORD": str(self.record),
            "FAKE_PIDS": str(self.pids),
            **(extra_env or {}),
        }
        deadline = time.monotonic() + timeout if timeout is not None else None
        return EngineTask(
            system="You are Holon's agent. Work only in the workspace.",
            user="Fix the failing test in parse.py.",
            workspace=self.workspace,
            output=self.output,
            budgets=Budgets(max_turns=max_turns, deadline=deadline, max_tokens=max_tokens),
            command_env=command_env,
        )

    def recorded(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.record.read_text())
        return data


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    bin_dir = tmp_path / "bin"
    workspace = tmp_path / "workspace"
    output = tmp_path / "output"
    for directory in (bin_dir, workspace, output, tmp_path / "home"):
        directory.mkdir()
    install(bin_dir, "claude", CLAUDE)
    install(bin_dir, "codex", CODEX)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "OPENAI_API_KEY": OPENAI_KEY,
    }
    return Setup(
        tmp_path, bin_dir, workspace, output, tmp_path / "argv.json", tmp_path / "pids", env
    )


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting for its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return not alive(pid)


RecorderFactory = Callable[[], MemoryRecorder]
