"""The interface every engine implements, and what it is given and gives back.

An engine works in the workspace and reports through a `Recorder` (the evidence, streamed to
disk). It never writes the manifest: the agent does, from the engine's `EngineResult`, the
recorded evidence and the skill's rules, so a stopped engine is never taken for a finished one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from holon.agent.conversation import Usage
from holon.price import Price


@dataclass(frozen=True)
class Budgets:
    """Limits the engine must stop at (the spec's `constraints`, the agent's own caps)."""

    max_turns: int = 50  # model requests; the spec's max_steps when it sets one
    deadline: float | None = None  # time.monotonic() value; from the spec's timeout
    max_tokens: int | None = None  # input + output tokens over the whole run
    # USD over the whole run at `prices` (docs/budgets.md); a model they do not price has no
    # cost to limit (its tokens still count against max_tokens).
    max_cost_usd: float | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    max_output_tokens: int = 8192  # per model request
    command_timeout: float = 300.0  # one shell command
    output_cap: int = 16 * 1024  # bytes of a command's output shown to the model


@dataclass(frozen=True)
class EngineTask:
    system: str  # the compiled system prompt
    user: str  # the compiled user prompt
    workspace: Path
    output: Path
    budgets: Budgets
    # The environment commands run with: never the engine's credentials.
    command_env: Mapping[str, str] = field(default_factory=dict)
    # Holon's input directory (spec, context): readable by the tools, never writable.
    input: Path | None = None


class CommandRecord(BaseModel):
    """One command the engine ran: what, where, how it ended, the tail of its output."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = Field(ge=1)
    command: str
    exit_code: int | None  # None: killed at its timeout or never started
    timed_out: bool = False
    duration: float = Field(ge=0)
    output_tail: str = ""
    truncated: bool = False


class Recorder(Protocol):
    """Where an engine's evidence goes, as it happens (streamed: memory stays flat)."""

    def transcript(self, entry: Mapping[str, Any]) -> None:
        """One transcript entry: a request, a model turn, a tool call and its result, a note."""

    def command(
        self,
        command: str,
        exit_code: int | None,
        *,
        duration: float,
        output: str,
        timed_out: bool = False,
    ) -> CommandRecord:
        """Record a command that ran; returns it with its id (what a finish cites)."""

    def usage(self, usage: Usage) -> None:
        """Add one request's token usage to the run's total."""


FinishStatus = Literal["success", "failure", "needs_human"]


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=100)
    text: str = Field(min_length=1, max_length=4000)


class Finish(BaseModel):
    """The structured result the model gave when it finished (the `finish` tool's arguments)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: FinishStatus
    summary: str = Field(min_length=1, max_length=20000)
    # Ids of recorded commands that verify the work (tests, a build); each must have passed.
    verification: list[int] = Field(default_factory=list)
    question: Question | None = None


Stop = Literal[
    "finished",  # the model called finish
    "max_steps",  # the turn budget ran out
    "timeout",  # the deadline passed
    "token_budget",  # the token budget ran out
    "cost_budget",  # the cost budget ran out
    "no_finish",  # the model stopped talking without calling finish
    "refused",  # the provider refused
    "error",  # the provider or the engine failed
]


@dataclass(frozen=True)
class EngineResult:
    stop: Stop
    finish: Finish | None = None
    error: str | None = None  # one line, secret-free
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    model: str | None = None
    engine_version: str | None = None


class Engine(Protocol):
    name: str

    def missing(self) -> str | None:
        """What the engine lacks to run (a credential, its CLI), named; None when ready. Never
        contacts the model: `--probe` uses it."""

    def run(self, task: EngineTask, recorder: Recorder) -> EngineResult: ...
