"""An in-memory Recorder and scripted providers for the built-in loop's tests."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from holon.agent.conversation import Message, ModelTurn, ToolCall, ToolSpec, Usage
from holon.agent.engine import Budgets, CommandRecord, EngineTask
from holon.agent.providers.base import ProviderError


class FakeRecorder:
    """holon.agent.engine.Recorder in memory; entries must be JSON, like the real one's."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.commands: list[CommandRecord] = []
        self.total = Usage()
        self.usage_calls = 0

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
            output_tail=output,
        )
        self.commands.append(record)
        return record

    def usage(self, usage: Usage) -> None:
        self.total = self.total + usage
        self.usage_calls += 1

    def kinds(self) -> list[str]:
        return [entry["kind"] for entry in self.entries]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [entry for entry in self.entries if entry["kind"] == kind]


Step = ModelTurn | Exception | Callable[[Sequence[Message]], ModelTurn]


class ScriptedProvider:
    """Answers each request with the next step of its script; keeps what it was sent."""

    name = "scripted"

    def __init__(self, steps: Sequence[Step], model: str = "scripted-1") -> None:
        self.steps = list(steps)
        self.model = model
        self.requests: list[list[Message]] = []
        self.max_tokens: list[int] = []
        self.tools: list[str] = []

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        self.requests.append(list(messages))
        self.max_tokens.append(max_tokens)
        self.tools = [tool.name for tool in tools]
        if len(self.requests) > len(self.steps):
            raise ProviderError("script exhausted")
        step = self.steps[len(self.requests) - 1]
        if isinstance(step, Exception):
            raise step
        if isinstance(step, ModelTurn):
            return step
        return step(messages)


class Repeating(ScriptedProvider):
    """Answers every request with the same turn, for ever."""

    def __init__(self, turn: ModelTurn) -> None:
        super().__init__([])
        self.turn = turn

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        self.requests.append(list(messages))
        self.max_tokens.append(max_tokens)
        return self.turn


_ids = iter(range(1, 1_000_000))


def call(name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> ToolCall:
    return ToolCall(id=f"call_{next(_ids)}", name=name, arguments=arguments, **kwargs)


def turn(*calls: ToolCall, text: str = "", usage: int = 0, **kwargs: Any) -> ModelTurn:
    return ModelTurn(
        text=text,
        tool_calls=list(calls),
        stop_reason=kwargs.pop("stop_reason", "tool_use" if calls else "end_turn"),
        usage=Usage(input_tokens=usage, output_tokens=0),
        **kwargs,
    )


def shell(command: str, **extra: Any) -> ToolCall:
    return call("shell", {"command": command, **extra})


def finish(status: str = "success", summary: str = "done", **extra: Any) -> ToolCall:
    return call("finish", {"status": status, "summary": summary, **extra})


def command_env() -> dict[str, str]:
    """A secret-free environment for commands: PATH only."""
    return {"PATH": os.environ.get("PATH", os.defpath)}


def make_task(root: Path, *, workspace: Path | None = None, **budgets: Any) -> EngineTask:
    workspace = workspace or root / "workspace"
    output = root / "output"
    workspace.mkdir(parents=True, exist_ok=True)
    output.mkdir(parents=True, exist_ok=True)
    return EngineTask(
        system="You are a test agent.",
        user="Do the task.",
        workspace=workspace,
        output=output,
        budgets=Budgets(**budgets),
        command_env=command_env(),
    )
