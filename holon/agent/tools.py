"""The built-in engine's tools: `shell`, `view`, `edit` and `finish`, few and robust.

Each is offered to the model as a ToolSpec (JSON Schema arguments) and run by `Toolbox.execute`,
which never raises for anything the model did: bad arguments, an unknown tool, a path outside
the workspace, a command that fails or never ends all come back as a result the model reads (and
the transcript records). Commands are recorded through the Recorder as they end, and the model
is told their id, which is what `finish` cites as verification.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from holon.agent.conversation import ToolCall, ToolSpec
from holon.agent.engine import EngineTask, Finish, Recorder
from holon.agent.file_tools import ToolFailed, edit, view
from holon.agent.paths import PathRefused, Sandbox
from holon.agent.shell import find_shell, run_command
from holon.validation import describe_validation_error

MAX_COMMAND = 100_000  # characters of one shell command


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ShellArgs(_Args):
    command: str = Field(min_length=1, max_length=MAX_COMMAND)
    timeout: float | None = Field(default=None, gt=0)


class ViewArgs(_Args):
    path: str = Field(min_length=1)
    start_line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)


class EditArgs(_Args):
    path: str = Field(min_length=1)
    old: str
    new: str


_STRING = {"type": "string"}

SHELL = ToolSpec(
    name="shell",
    description=(
        "Run a shell command (bash -c) in the workspace and get its exit code and output "
        "(stdout and stderr merged; long output keeps its head and tail). Each command starts a "
        "fresh shell in the workspace directory: cd and variables do not carry over, and "
        "processes it leaves in the background end with it. stdin is empty, so nothing "
        "interactive works. Every command is recorded with an id (command #N); cite the ids of "
        "passing test or build commands in finish's verification."
    ),
    parameters={
        "type": "object",
        "properties": {
            "command": {**_STRING, "description": "The command line, run by bash -c."},
            "timeout": {
                "type": "number",
                "description": "Seconds before the command is killed (capped by the run's limits).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
)

VIEW = ToolSpec(
    name="view",
    description=(
        "Show a text file with line numbers (optionally lines start_line..end_line, 1-based), "
        "or list a directory. Paths are relative to the workspace, or absolute under the "
        "workspace or the output directory."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {**_STRING, "description": "The file or directory."},
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)

EDIT = ToolSpec(
    name="edit",
    description=(
        "Replace the exact text `old` with `new` in a file; `old` must occur exactly once "
        "(copy it from view, whitespace included, without the line numbers). With an empty "
        "`old`, create a new file (it must not exist yet) holding `new`."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {**_STRING, "description": "The file, as for view."},
            "old": {**_STRING, "description": "The text to replace; empty to create the file."},
            "new": {**_STRING, "description": "The replacement text (the file's content)."},
        },
        "required": ["path", "old", "new"],
        "additionalProperties": False,
    },
)

FINISH = ToolSpec(
    name="finish",
    description=(
        "End the work with its result. status: success (done, and verified where the task "
        "asks for it), failure (could not be done; say why), or needs_human (a question only "
        "a person can answer blocks the work; give it in question). verification: the ids of "
        "recorded commands that passed and show the work is right (tests, a build). Never "
        "claim tests pass without citing a recorded passing run."
    ),
    parameters={
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["success", "failure", "needs_human"]},
            "summary": {**_STRING, "description": "What was done and why, for a reviewer."},
            "verification": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "description": "Ids of recorded commands (command #N) that passed.",
            },
            "question": {
                "type": "object",
                "properties": {
                    "id": {**_STRING, "description": "A short stable key for the question."},
                    "text": {**_STRING, "description": "The question for a person."},
                },
                "required": ["id", "text"],
                "additionalProperties": False,
            },
        },
        "required": ["status", "summary"],
        "additionalProperties": False,
    },
)

SPECS: tuple[ToolSpec, ...] = (SHELL, VIEW, EDIT, FINISH)


@dataclass(frozen=True)
class ToolOutcome:
    """What one call gave back: the text the model reads, and a finish when the loop ends."""

    text: str
    is_error: bool = False
    finish: Finish | None = None
    command_id: int | None = None


class Toolbox:
    """Runs the tools of one engine run in its workspace, recording commands as they end."""

    specs = SPECS

    def __init__(
        self,
        task: EngineTask,
        recorder: Recorder,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._task = task
        self._recorder = recorder
        self._clock = clock
        self._sandbox = Sandbox(task.workspace, task.output, task.input)
        self._shell = find_shell(task.command_env)
        # id -> passed, for checking what finish cites (ints only: memory stays flat).
        self._passed: dict[int, bool] = {}

    def execute(self, call: ToolCall) -> ToolOutcome:
        handler = self._handlers().get(call.name)
        if handler is None:
            names = ", ".join(spec.name for spec in SPECS)
            return _error(f"unknown tool {call.name!r}; the tools are {names}")
        if call.arguments is None:
            sent = (call.raw_arguments or "")[:200]
            return _error(
                f"the arguments of {call.name} were not a JSON object"
                + (f" (received: {json.dumps(sent)})" if sent else "")
            )
        try:
            return handler(call.arguments)
        except ValidationError as exc:
            return _error(describe_validation_error(f"bad arguments for {call.name}", exc))
        except (PathRefused, ToolFailed) as exc:
            return _error(str(exc))
        except OSError as exc:
            return _error(f"{call.name} failed: {exc.strerror or exc}")

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], ToolOutcome]]:
        return {
            "shell": self._run_shell,
            "view": self._view,
            "edit": self._edit,
            "finish": self._finish,
        }

    def _run_shell(self, arguments: dict[str, Any]) -> ToolOutcome:
        args = ShellArgs.model_validate(arguments)
        budgets = self._task.budgets
        limits = [(budgets.command_timeout, "the command time limit")]
        if args.timeout is not None:
            limits.append((args.timeout, "its timeout"))
        if budgets.deadline is not None:
            limits.append((budgets.deadline - self._clock(), "the run's deadline"))
        limit, why = min(limits, key=lambda pair: pair[0])
        if limit <= 0:
            return _error("not run: the run's deadline has passed")
        if "\0" in args.command:
            return _error("the command contains a NUL character")
        try:
            run = run_command(
                args.command,
                cwd=self._task.workspace,
                env=self._task.command_env,
                limit=limit,
                cap=budgets.output_cap,
                shell=self._shell,
            )
        except OSError as exc:
            return _error(f"the command could not start: {exc.strerror or exc}")
        record = self._recorder.command(
            args.command,
            run.exit_code,
            duration=run.duration,
            output=run.output,
            timed_out=run.timed_out,
        )
        self._passed[record.id] = run.exit_code == 0 and not run.timed_out
        if run.timed_out:
            status = f"timed out after {limit:g} s ({why}) and was killed"
        elif run.signal is not None:
            status = f"was killed by signal {run.signal} (exit {run.exit_code})"
        else:
            status = f"exited {run.exit_code}"
        head = f"command #{record.id} {status} in {run.duration:.1f} s"
        if run.truncated:
            head += f"; {run.total_bytes} bytes of output, head and tail shown"
        body = run.output if run.output else "(no output)"
        # A failing command is a result, not a misuse of the tool: is_error stays False.
        return ToolOutcome(f"{head}\n{body}", command_id=record.id)

    def _view(self, arguments: dict[str, Any]) -> ToolOutcome:
        args = ViewArgs.model_validate(arguments)
        cap = self._task.budgets.output_cap
        return ToolOutcome(view(self._sandbox, args.path, args.start_line, args.end_line, cap))

    def _edit(self, arguments: dict[str, Any]) -> ToolOutcome:
        args = EditArgs.model_validate(arguments)
        return ToolOutcome(edit(self._sandbox, args.path, args.old, args.new))

    def _finish(self, arguments: dict[str, Any]) -> ToolOutcome:
        finish = Finish.model_validate(arguments)
        if finish.status == "needs_human" and finish.question is None:
            return _error("needs_human needs a question {id, text} for the person to answer")
        if finish.status == "success":
            for ident in finish.verification:
                if ident not in self._passed:
                    return _error(f"verification cites command #{ident}, which was never run")
                if not self._passed[ident]:
                    return _error(
                        f"verification cites command #{ident}, which did not pass; cite "
                        "passing commands only, or finish with failure"
                    )
        return ToolOutcome("finished", finish=finish)


def _error(text: str) -> ToolOutcome:
    return ToolOutcome(text, is_error=True)
