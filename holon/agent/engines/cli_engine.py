"""The run every CLI engine shares: start the CLI, stream its events into the evidence, decide
how it stopped, and read its finish.json when nothing stopped it first.

Precedence: the deadline (`timeout`), the token budget (`token_budget`), what the CLI's own
stream or exit says (`max_steps`, `error`: the parser's verdict), and only then the finish:
absent or invalid is `no_finish`, never success because the CLI stopped talking.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from holon.agent.engine import EngineResult, EngineTask, Recorder, Stop
from holon.agent.engines import cli_finish
from holon.agent.engines.cli_evidence import CliRecorder, one_line
from holon.agent.engines.cli_process import CliCall, CliExit, StopCli, run_cli
from holon.secrets import mask_secret_looking

# Every credential a CLI engine knows: none reaches a CLI but its own.
ENGINE_CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
)


class StreamParser(Protocol):
    """Reads one CLI's events into the evidence and judges its end."""

    model: str | None
    version: str | None

    def event(self, event: dict[str, Any]) -> None: ...

    def end(self, exit: CliExit) -> None:
        """The stream is over: record what is still pending (commands never answered)."""

    def verdict(self, exit: CliExit) -> tuple[Stop, str] | None:
        """How the CLI stopped when that was not finishing (`max_steps`, `error`), else None."""

    def turns(self) -> int: ...


def find_executable(name: str, env: Mapping[str, str]) -> str | None:
    """The CLI on the agent's PATH (the one given, not this process's)."""
    return shutil.which(name, path=env.get("PATH", os.defpath))


def cli_environment(
    command_env: Mapping[str, str], credentials: Mapping[str, str], settings: Mapping[str, str]
) -> dict[str, str]:
    """The commands' environment, without any engine credential that slipped into it, plus the
    CLI's own credentials and the settings that keep it headless and quiet."""
    env = {k: v for k, v in command_env.items() if k not in ENGINE_CREDENTIALS}
    env.update(settings)
    env.update(credentials)
    return env


def drive(
    task: EngineTask,
    recorder: Recorder,
    *,
    engine: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    stdin: str,
    parser: StreamParser,
    evidence: CliRecorder,
) -> EngineResult:
    def result(stop: Stop, error: str | None = None, **extra: Any) -> EngineResult:
        return EngineResult(
            stop=stop,
            error=None if error is None else evidence.redact(error),
            usage=evidence.usage,
            turns=parser.turns(),
            model=parser.model,
            engine_version=parser.version,
            **extra,
        )

    def on_event(event: dict[str, Any]) -> None:
        evidence.event(event)
        parser.event(event)

    try:
        cli_finish.clear(task.output)
    except OSError as exc:
        return result("error", f"{engine}: the output directory is unusable ({exc.strerror})")
    call = CliCall(
        argv=argv,
        cwd=task.workspace,
        env=env,
        stdin=stdin.encode("utf-8", "surrogatepass"),
        deadline=task.budgets.deadline,
    )
    try:
        exit = run_cli(call, on_event, evidence.note)
    except OSError as exc:
        return result("error", f"{engine}: cannot start {argv[0]}: {exc.strerror or exc}")
    with contextlib.suppress(StopCli):  # the budget is judged below from the same usage
        parser.end(exit)
    if exit.stderr_tail.strip():
        recorder.transcript(
            evidence.scrub(
                {"engine": engine, "kind": "stderr", "tail": mask_secret_looking(exit.stderr_tail)}
            )
        )
    budget = task.budgets.max_tokens
    if exit.timed_out:
        return result("timeout", f"{engine} was killed at the deadline")
    if exit.stopped is not None or (budget is not None and evidence.usage.total > budget):
        return result("token_budget", f"{engine} was stopped: the token budget ran out")
    verdict = parser.verdict(exit)
    if verdict is not None:
        stop, reason = verdict
        return result(stop, one_line(reason))
    finish, unread = cli_finish.read(task.output, evidence)
    if finish is None:
        return result("no_finish", unread)
    return result("finished", finish=finish)


def exit_reason(name: str, exit: CliExit) -> str:
    """Why a CLI that exited unsuccessfully did, in one line."""
    code = exit.exit_code or 0
    what = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
    line = exit.stderr_line()
    return f"{name} {what}" + (f": {line}" if line else "")


def secrets_of(credentials: Mapping[str, str]) -> Iterable[str]:
    return [value for value in credentials.values() if value]


class CliEngine:
    """What both CLI engines share: the CLI found on PATH, its credentials, readiness, and a run
    through `drive`. A subclass names its CLI and gives its argv (`command`) and its stream's
    parser (`parser`)."""

    name: str
    executable_name: str
    product: str  # how `missing()` names the CLI
    credential_names: tuple[str, ...]

    def __init__(
        self,
        *,
        executable: str | None,
        credentials: Mapping[str, str],
        settings: Mapping[str, str],
        model: str | None = None,
    ) -> None:
        self.executable = executable
        self.credentials = dict(credentials)
        self.settings = dict(settings)
        self.model = model

    def missing(self) -> str | None:
        if self.executable is None:
            return f"the {self.executable_name} CLI ({self.product}) is not on PATH"
        if not self.credentials:
            return " or ".join(self.credential_names) + " is not set"
        return None

    def command(self, task: EngineTask) -> tuple[list[str], str]:
        """The argv and the prompt piped to it."""
        raise NotImplementedError

    def parser(self, evidence: CliRecorder, task: EngineTask) -> StreamParser:
        raise NotImplementedError

    def run(self, task: EngineTask, recorder: Recorder) -> EngineResult:
        lacking = self.missing()
        if lacking is not None:
            return EngineResult(stop="error", error=lacking, model=self.model)
        evidence = CliRecorder(
            recorder, self.name, secrets_of(self.credentials), task.budgets.max_tokens
        )
        argv, stdin = self.command(task)
        return drive(
            task,
            recorder,
            engine=self.name,
            argv=argv,
            env=cli_environment(task.command_env, self.credentials, self.settings),
            stdin=stdin,
            parser=self.parser(evidence, task),
            evidence=evidence,
        )
