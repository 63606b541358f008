"""The `claude-code` engine: Claude Code's CLI driven headlessly, its stream-json read as evidence.

It runs `claude -p --output-format stream-json --verbose` with the prompt on standard input, the
system prompt appended with `--append-system-prompt`, `--permission-mode bypassPermissions` (it
never asks: Holon's sandbox is the boundary) and `--max-turns` from the budget.

The stream (one JSON object per line): `system`/`init` (model, `claude_code_version`),
`assistant` messages (text and `tool_use` blocks), `user` messages (`tool_result` blocks) and a
last `result` (`subtype` success | error_max_turns | error_during_execution | ..., `is_error`,
`num_turns`, `usage`, `total_cost_usd`). Every event goes to the transcript; each `Bash` tool use
with its result becomes a recorded command. Claude Code reports no exit code as such: a failed
command's result is marked `is_error` and starts "Exit code N", which is parsed; otherwise an
error result counts as exit 1 and any other result as 0 (an approximation, documented in
docs/engines.md). Durations are measured from the tool use to its result as the stream shows them.
"""

from __future__ import annotations

import os
import re
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

EXECUTABLE = "claude"
CREDENTIALS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
PASSED_THROUGH = ("ANTHROPIC_BASE_URL",)  # configuration, not a credential: gateways need it
# Documented switches that keep it headless and quiet: no updater, no telemetry or error
# reports, no other non-essential traffic, and its credentials kept out of the commands it runs.
SETTINGS = {
    "CI": "1",
    "NO_COLOR": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB": "1",
}
# One argv string may not exceed 128 KiB on Linux: a longer system prompt goes on stdin instead.
APPEND_LIMIT = 64 * 1024
_EXIT_CODE = re.compile(r"\AExit code (-?\d+)")
_TIMED_OUT = re.compile(r"\ACommand timed out")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_of(raw: Any) -> Usage | None:
    """A message's usage; cache reads and writes are input the model processed too."""
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=_count(raw.get("input_tokens"))
        + _count(raw.get("cache_creation_input_tokens"))
        + _count(raw.get("cache_read_input_tokens")),
        output_tokens=_count(raw.get("output_tokens")),
    )


def text_of(content: Any) -> str:
    """A tool result's text: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts)
    return ""


def exit_code_of(text: str, is_error: bool) -> int:
    found = _EXIT_CODE.match(text)
    if found is not None:
        return int(found.group(1))
    return 1 if is_error else 0


class ClaudeStream:
    """Claude Code's stream-json, read into the evidence."""

    def __init__(self, evidence: CliRecorder, max_turns: int, model: str | None = None) -> None:
        self.evidence = evidence
        self.max_turns = max_turns
        self.model = model  # the one asked for, until the stream names the one that ran
        self.version: str | None = None
        self.result: dict[str, Any] | None = None
        self.messages = 0
        self._message: object = None  # the id of the message whose usage is not yet recorded
        self._usage: Usage | None = None
        self._pending: dict[str, tuple[str, float]] = {}  # tool_use id -> (command, start)

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.model = _text(event.get("model")) or self.model
            self.version = _text(event.get("claude_code_version")) or self.version
        elif kind == "assistant":
            self._assistant(event.get("message"))
        elif kind == "user":
            self._user(event.get("message"))
        elif kind == "result":
            self.result = event

    def _flush_usage(self) -> None:
        usage, self._usage = self._usage, None
        if usage is not None:
            self.evidence.add_usage(usage)

    def _assistant(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        # Claude Code prints one event per content block, each with the message's usage so far:
        # usage is recorded once per message, when the next one starts (or the stream ends).
        ident = message.get("id")
        if ident is None or ident != self._message:
            self._flush_usage()
            self._message = ident
            self.messages += 1
        self._usage = usage_of(message.get("usage")) or self._usage
        self.model = _text(message.get("model")) or self.model
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            arguments = block.get("input")
            command = arguments.get("command") if isinstance(arguments, dict) else None
            ident = block.get("id")
            if block.get("name") == "Bash" and isinstance(command, str) and isinstance(ident, str):
                self._pending[ident] = (command, time.monotonic())

    def _user(self, message: Any) -> None:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            started = self._pending.pop(str(block.get("tool_use_id")), None)
            if started is None:
                continue
            command, start = started
            output = text_of(block.get("content"))
            is_error = block.get("is_error") is True
            timed_out = is_error and _TIMED_OUT.match(output) is not None
            self.evidence.command(
                command,
                None if timed_out else exit_code_of(output, is_error),
                duration=time.monotonic() - start,
                output=output,
                timed_out=timed_out,
            )

    def end(self, exit: CliExit) -> None:
        for command, start in self._pending.values():
            self.evidence.note("a Bash command got no result before claude ended")
            self.evidence.command(
                command,
                None,
                duration=time.monotonic() - start,
                output="",
                timed_out=exit.timed_out,
            )
        self._pending.clear()
        self._flush_usage()

    def verdict(self, exit: CliExit) -> tuple[Stop, str] | None:
        result = self.result
        if result is not None:
            subtype = _text(result.get("subtype")) or "unknown"
            if subtype == "error_max_turns":
                return "max_steps", f"claude reached its turn limit (--max-turns {self.max_turns})"
            if result.get("is_error") is True or subtype != "success":
                errors = result.get("errors")
                detail = (
                    "; ".join(str(e) for e in errors[:3])
                    if isinstance(errors, list) and errors
                    else text_of(result.get("result"))
                )
                return "error", f"claude reported {subtype}" + (f": {detail}" if detail else "")
        if exit.exit_code is not None and exit.exit_code != 0:
            return "error", exit_reason(EXECUTABLE, exit)
        if result is None:
            return "error", "claude ended without a result event"
        return None

    def turns(self) -> int:
        turns = self.result.get("num_turns") if self.result is not None else None
        return turns if isinstance(turns, int) and turns >= 0 else self.messages


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class ClaudeCodeEngine(CliEngine):
    name = "claude-code"
    executable_name = EXECUTABLE
    product = "Claude Code"
    credential_names = CREDENTIALS

    @classmethod
    def from_env(cls, env: Mapping[str, str], model: str | None = None) -> ClaudeCodeEngine:
        settings = dict(SETTINGS)
        settings.update({k: env[k] for k in PASSED_THROUGH if env.get(k)})
        if os.geteuid() == 0:
            # Claude Code refuses to bypass permissions as root unless told it is in a sandbox;
            # the agent runs in Holon's.
            settings["IS_SANDBOX"] = "1"
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
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
            "--max-turns",
            str(task.budgets.max_turns),
        ]
        if self.model:
            argv += ["--model", self.model]
        system: str | None = task.system
        if system and len(system.encode("utf-8", "surrogatepass")) <= APPEND_LIMIT:
            argv += ["--append-system-prompt", system]
            system = None
        return argv, cli_finish.prompt(task.user, task.output, system=system)

    def parser(self, evidence: CliRecorder, task: EngineTask) -> StreamParser:
        return ClaudeStream(evidence, task.budgets.max_turns, self.model)
