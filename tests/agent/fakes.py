"""A fake Engine that runs a script, and a real on-disk layout to run `holon agent` in."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from holon.agent.conversation import Usage
from holon.agent.engine import EngineResult, EngineTask, Finish, Recorder

Script = Callable[[EngineTask, Recorder], EngineResult]
KEY = "sk-ant-api03-" + "k" * 40  # looks like an Anthropic key to holon.secrets


@dataclass
class ScriptedEngine:
    script: Script
    lacking: str | None = None
    name: str = "fake"
    tasks: list[EngineTask] = field(default_factory=list)

    def missing(self) -> str | None:
        return self.lacking

    def run(self, task: EngineTask, recorder: Recorder) -> EngineResult:
        self.tasks.append(task)
        return self.script(task, recorder)


def shell(task: EngineTask, recorder: Recorder, command: str) -> int:
    """Run `command` the way an engine must: in the workspace, with the command environment."""
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=task.workspace,
        env=dict(task.command_env),
        capture_output=True,
        text=True,
        check=False,
    )
    record = recorder.command(
        command, done.returncode, duration=0.01, output=done.stdout + done.stderr
    )
    return record.id


def finished(
    status: str = "success", verification: list[int] | None = None, **extra: object
) -> EngineResult:
    finish = Finish.model_validate(
        {"status": status, "summary": "did the work", "verification": verification or [], **extra}
    )
    return EngineResult(
        stop="finished",
        finish=finish,
        usage=Usage(input_tokens=10, output_tokens=5),
        turns=3,
        model="fake-model",
        engine_version="1.0",
    )


def passing_tests(task: EngineTask, recorder: Recorder) -> EngineResult:
    recorder.transcript({"kind": "turn", "text": "running the tests"})
    recorder.usage(Usage(input_tokens=10, output_tokens=5))
    (task.workspace / "fixed.txt").write_text("fixed\n")
    command = shell(task, recorder, "true")
    return finished(verification=[command])


SPEC = """\
version: v1
kind: Holon
metadata:
  name: test
  skills: [{skills}]
goal:
  description: Fix the failing test
  issue_id: "7"
constraints:
  max_steps: 12
  timeout: 5m
"""


@dataclass(frozen=True)
class Layout:
    input: Path
    workspace: Path
    output: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOLON_INPUT_DIR": str(self.input),
            "HOLON_WORKSPACE_DIR": str(self.workspace),
            "HOLON_OUTPUT_DIR": str(self.output),
            **extra,
        }


def make_layout(
    root: Path, *, skills: str = "", spec: str | None = None, git: bool = True
) -> Layout:
    layout = Layout(root / "input", root / "workspace", root / "output")
    for path in (layout.input, layout.workspace, layout.output):
        path.mkdir(parents=True)
    if spec is None:
        spec = SPEC.format(skills=skills)
    (layout.input / "spec.yaml").write_text(spec)
    if git:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "GIT_AUTHOR_NAME": "T",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
        }
        (layout.workspace / "README.md").write_text("hello\n")
        for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
            subprocess.run(["git", *argv], cwd=layout.workspace, env=env, check=True)
    return layout


def evidence_text(output: Path) -> str:
    """Every file the agent wrote, concatenated (to look for what must not be there)."""
    parts = []
    for path in sorted(output.rglob("*")):
        if path.is_file() and not path.is_symlink():
            parts.append(path.read_text(errors="replace"))
    return "\n".join(parts)
