"""The `codex` engine: OpenAI's Codex CLI driven headlessly, its `exec --json` events as evidence.

It runs `codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox
--config ... -C <workspace> -` with the prompt on standard input (`-`). Codex's own sandbox and
approvals are bypassed: it never asks, and Holon's sandbox is the boundary (Codex's
Landlock/seccomp sandbox often cannot start inside a container). Codex has no flag for a system
prompt or a turn limit: the system prompt leads the prompt, and the deadline and token budget
are enforced here.

The stream (one JSON object per line): `thread.started`, `turn.started`, `item.started` /
`item.updated` / `item.completed` (items: agent_message, reasoning, command_execution {command,
aggregated_output, exit_code, status}, file_change, mcp_tool_call, web_search, todo_list, error),
`turn.completed` {usage: input_tokens, cached_input_tokens, output_tokens}, `turn.failed` {error}
and `error`. Every event goes to the transcript; each completed command_execution becomes a
recorded command with its real exit code (none when it was declined or never finished).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from holon.agent.conversation import Usage
from holon.agent.engine import EngineTask, Stop
from holon.agent.engines import cli_finish
from holon.agent.engines.cli_engine import (
    CliEngine,
    StreamParser,
    exit_reason,
    find_executable,
)
from holon.agent.engines.cli_evidence import CliRecorder
from holon.agent.engines.cli_process import CliExit

EXECUTABLE = "codex"
CREDENTIALS = ("CODEX_API_KEY", "OPENAI_API_KEY")
PASSED_THROUGH = ("OPENAI_BASE_URL",)  # configuration, not a credential: local servers need it
SETTINGS = {"CI": "1", "NO_COLOR": "1"}
# Configuration overrides: no update check, and the variables named like credentials (`*KEY*`,
# `*SECRET*`, `*TOKEN*`, its own key included) left out of the commands it runs, which Codex
# no longer does by default.
CONFIG = (
    "--config",
    "check_for_update_on_startup=false",
    "--config",
    "shell_environment_policy.ignore_default_excludes=false",
)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _message(value: Any) -> str:
    """The message of an `error` object, or of an event carrying one."""
    if isinstance(value, dict):
        message = value.get("message")
        if isinstance(message, str):
            return message
    return ""


class CodexStream:
    """Codex's `exec --json` events, read into the evidence."""

    def __init__(self, evidence: CliRecorder, model: str | None = None) -> None:
        self.evidence = evidence
        self.model = model  # Codex's stream does not name it: the one asked for, if any
        self.version: str | None = None
        self.started_turns = 0
        self.completed = False
        self.failed: str | None = None
        self.error: str | None = None  # an `error` event no later turn.completed answered
        self._running: dict[str, tuple[str, float]] = {}  # item id -> (command, start)

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        item = event.get("item")
        if kind == "turn.started":
            self.started_turns += 1
        elif kind == "turn.completed":
            self.completed = True
            self.error = None
            usage = event.get("usage")
            if isinstance(usage, dict):
                self.evidence.add_usage(
                    Usage(
                        input_tokens=_count(usage.get("input_tokens")),
                        output_tokens=_count(usage.get("output_tokens")),
                    )
                )
        elif kind == "turn.failed":
            self.failed = _message(event.get("error")) or "no message"
        elif kind == "error":
            self.error = _message(event) or "no message"
        elif isinstance(item, dict) and item.get("type") == "command_execution":
            if kind == "item.started":
                self._started(item)
            elif kind == "item.completed":
                self._completed(item)

    def _started(self, item: dict[str, Any]) -> None:
        ident, command = item.get("id"), item.get("command")
        if isinstance(ident, str) and isinstance(command, str):
            self._running[ident] = (command, time.monotonic())

    def _completed(self, item: dict[str, Any]) -> None:
        command = item.get("command")
        if not isinstance(command, str):
            return
        started = self._running.pop(str(item.get("id")), None)
        duration = time.monotonic() - started[1] if started is not None else 0.0
        code = item.get("exit_code")
        finished = item.get("status") in ("completed", "failed")
        exact = isinstance(code, int) and not isinstance(code, bool)
        exit_code = code if finished and exact else None
        output = item.get("aggregated_output")
        self.evidence.command(
            command,
            exit_code,
            duration=duration,
            output=output if isinstance(output, str) else "",
        )

    def end(self, exit: CliExit) -> None:
        for command, start in self._running.values():
            self.evidence.note("a command had not completed when codex ended")
            self.evidence.command(
                command,
                None,
                duration=time.monotonic() - start,
                output="",
                timed_out=exit.timed_out,
            )
        self._running.clear()

    def verdict(self, exit: CliExit) -> tuple[Stop, str] | None:
        if self.failed is not None:
            return "error", f"codex: the turn failed: {self.failed}"
        if self.error is not None:
            return "error", f"codex reported an error: {self.error}"
        if exit.exit_code is not None and exit.exit_code != 0:
            return "error", exit_reason(EXECUTABLE, exit)
        if not self.completed:
            return "error", "codex ended without completing its turn"
        return None

    def turns(self) -> int:
        return self.started_turns


class CodexEngine(CliEngine):
    name = "codex"
    executable_name = EXECUTABLE
    product = "OpenAI Codex"
    credential_names = CREDENTIALS

    @classmethod
    def from_env(cls, env: Mapping[str, str], model: str | None = None) -> CodexEngine:
        settings = dict(SETTINGS)
        settings.update({k: env[k] for k in PASSED_THROUGH if env.get(k)})
        return cls(
            executable=find_executable(EXECUTABLE, env),
            credentials={k: env[k] for k in CREDENTIALS if env.get(k)},
            settings=settings,
            model=model,
        )

    def command(self, task: EngineTask) -> tuple[list[str], str]:
        """The argv and the prompt piped to it."""
        assert self.executable is not None
        argv = [
            self.executable,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            *CONFIG,
            "-C",
            str(task.workspace),
        ]
        if self.model:
            argv += ["--model", self.model]
        argv.append("-")  # the prompt is read from standard input
        return argv, cli_finish.prompt(task.user, task.output, system=task.system)

    def parser(self, evidence: CliRecorder, task: EngineTask) -> StreamParser:
        return CodexStream(evidence, self.model)
