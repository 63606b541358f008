"""`holon agent [--probe]`: read the inputs, run an engine in the workspace, write honest outputs.

The inputs come from the contract's layout (`HOLON_INPUT_DIR`, `HOLON_WORKSPACE_DIR`,
`HOLON_OUTPUT_DIR`, by default `/holon/...`). Whatever happens (success, a failure, a bad input,
missing credentials, an engine that crashes, a deadline, SIGTERM from `docker stop`) the agent
writes `manifest.json` last and exits 0, 1 or 2 from its outcome; the only exception is an output
directory it cannot write at all.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from holon import __version__
from holon.agent.engine import Budgets, Engine, EngineResult, EngineTask, Stop
from holon.agent.engines.registry import (
    EngineUnavailable,
    create_engine,
    engine_name,
    model_name,
)
from holon.agent.hygiene import make_non_dumpable, split_environment
from holon.agent.outcome import Limits, Verdict, human_duration, judge, manifest_for, one_line
from holon.agent.outputs import SUMMARY_FILE, Outputs
from holon.agent.prompt import compile_prompt
from holon.agent.providers.base import MissingCredentials
from holon.agent.recorder import (
    COMMANDS_FILE,
    EVIDENCE_DIR,
    TRANSCRIPT_FILE,
    USAGE_FILE,
    EvidenceRecorder,
)
from holon.agent.skillset import combined_requires, resolve_skills
from holon.agent.summary import render_summary
from holon.contract.layout import (
    CONTAINER_LAYOUT,
    ENV_INPUT_DIR,
    ENV_OUTPUT_DIR,
    ENV_WORKSPACE_DIR,
    SPEC_FILE,
    AgentExit,
)
from holon.contract.manifest import Manifest
from holon.contract.spec import Spec, load_spec
from holon.errorlog import format_traceback
from holon.errors import InvalidInput
from holon.secrets import mask_secret_looking
from holon.skills.catalog import Skill, SkillRequires

AGENT = "holon"
DEFAULT_MAX_TURNS = 50
# The runner's own limit when the spec sets none (holon.runner.run.DEFAULT_TIMEOUT; a test keeps
# the two equal): the agent must be done, manifest written, before the runner kills it.
RUNNER_DEFAULT_TIMEOUT = 30 * 60.0
GIT_STATUS_TIMEOUT = 60.0

_EXIT = {"success": AgentExit.SUCCESS, "failure": AgentExit.FAILURE}


@dataclass(frozen=True)
class Options:
    probe: bool = False
    engine: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class Paths:
    input: Path
    workspace: Path
    output: Path

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Paths:
        return cls(
            Path(env.get(ENV_INPUT_DIR) or CONTAINER_LAYOUT.input),
            Path(env.get(ENV_WORKSPACE_DIR) or CONTAINER_LAYOUT.workspace),
            Path(env.get(ENV_OUTPUT_DIR) or CONTAINER_LAYOUT.output),
        )


class Stopped(BaseException):
    """The run was stopped from outside (SIGTERM) or overran its deadline (the watchdog).

    A BaseException, so an engine's `except Exception` cannot swallow it."""


def margin_for(timeout: float) -> float:
    """How long before the runner's timeout the agent stops, to write its outputs in time."""
    return min(max(timeout * 0.1, 5.0), 60.0, timeout / 2)


def budgets_for(spec: Spec, started: float) -> tuple[Budgets, Limits, float]:
    """The engine's budgets from the spec; the limits to name; the watchdog's delay (seconds)."""
    timeout = spec.constraints.timeout or RUNNER_DEFAULT_TIMEOUT
    margin = margin_for(timeout)
    max_turns = spec.constraints.max_steps or DEFAULT_MAX_TURNS
    limits = spec.constraints
    budgets = Budgets(
        max_turns=max_turns,
        deadline=started + timeout - margin,
        max_tokens=limits.max_tokens,
        max_cost_usd=limits.max_cost_usd,
        prices=dict(limits.prices),
    )
    # The watchdog fires halfway through the margin: an engine that overran its deadline still
    # leaves the agent time to write its manifest.
    return budgets, Limits(max_steps=max_turns, timeout=timeout), timeout - margin / 2


def workspace_changed(workspace: Path, env: Mapping[str, str]) -> bool | None:
    """Whether the workspace differs from its HEAD (tracked or untracked); None when git cannot
    tell. The workspace's config was within the model's reach: nothing in it that runs a
    program is honoured, and git sees none of the agent's environment."""
    git_env = {
        "PATH": env.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    argv = [
        "git",
        "-c",
        "core.fsmonitor=",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "safe.directory=*",
        "status",
        "--porcelain",
        "--untracked-files=all",
    ]
    try:
        done = subprocess.run(
            argv,
            cwd=workspace,
            env=git_env,
            capture_output=True,
            timeout=GIT_STATUS_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return bool(done.stdout.strip())


class _Run:
    """One `holon agent` invocation: what it has learned so far, to report from any point."""

    def __init__(self, options: Options, env: Mapping[str, str], paths: Paths) -> None:
        self.options = options
        self.env = env
        self.paths = paths
        self.started = time.monotonic()
        self.command_env, self.redactor = split_environment(env)
        self.engine_name = engine_name(options.engine, env)
        self.outputs: Outputs | None = None
        self.recorder: EvidenceRecorder | None = None
        self.skills: list[Skill] = []
        self.limits = Limits(max_steps=DEFAULT_MAX_TURNS)
        self.finalizing = False

    def mask(self, text: str) -> str:
        return mask_secret_looking(self.redactor(text))

    # -- reporting ----------------------------------------------------------------------------

    def report(self, verdict: Verdict, result: EngineResult | None = None) -> int:
        """Write summary.md and, last, manifest.json; the exit code of the verdict."""
        self.finalizing = True
        outputs = self.outputs
        assert outputs is not None
        recorder = self.recorder
        if recorder is not None:
            recorder.note(
                f"outcome: {verdict.outcome}" + (f": {verdict.error}" if verdict.error else "")
            )
            recorder.close()
        declared = [a.path for s in self.skills for a in s.artifacts]
        own = [SUMMARY_FILE] + (
            [f"{EVIDENCE_DIR}/{n}" for n in (TRANSCRIPT_FILE, COMMANDS_FILE, USAGE_FILE)]
            if recorder is not None
            else []
        )
        duration = round(time.monotonic() - self.started, 3)
        try:
            outputs.write_summary(
                render_summary(verdict, result, self.engine_name, recorder, duration)
            )
        except OSError:
            own.remove(SUMMARY_FILE)
        artifacts = own + [p for p in outputs.present(declared) if p not in own]
        manifest = manifest_for(
            verdict,
            result,
            agent=AGENT,
            version=__version__,
            engine=self.engine_name,
            duration=duration,
            artifacts=artifacts,
            requests=recorder.requests if recorder is not None else None,
        )
        outputs.write_manifest(manifest)
        if verdict.outcome == "needs_human":
            return AgentExit.NEEDS_HUMAN
        return _EXIT[verdict.outcome]

    def fail(self, error: str, result: EngineResult | None = None) -> int:
        return self.report(Verdict("failure", one_line(self.mask(error))), result)

    def crashed(self, exc: BaseException, what: str) -> str:
        """One line for a crash; its traceback goes to evidence/agent-error.log only."""
        logged = None
        if self.outputs is not None:
            logged = self.outputs.log_error(format_traceback(exc))
        where = f" (traceback in {EVIDENCE_DIR}/agent-error.log)" if logged else ""
        detail = one_line(self.mask(str(exc)), 200)
        return f"{what}: {exc.__class__.__name__}" + (f": {detail}" if detail else "") + where

    # -- the run ------------------------------------------------------------------------------

    def load(self) -> tuple[Spec, Engine]:
        """The spec and the engine; InvalidInput, EngineUnavailable or MissingCredentials name
        what is wrong."""
        spec_path = self.paths.input / SPEC_FILE
        if not spec_path.is_file():
            raise InvalidInput(f"{SPEC_FILE} missing: no file at {spec_path}")
        spec = load_spec(spec_path)
        engine = create_engine(self.engine_name, self.env, model_name(self.options.model, self.env))
        self.skills = resolve_skills(spec, self.paths.input)
        return spec, engine

    def probe(self) -> int:
        assert self.outputs is not None
        problems: list[str] = []
        writable = self.outputs.writable()
        if writable is not None:
            problems.append(writable)
        try:
            _, engine = self.load()
            missing = engine.missing()
            if missing is not None:
                problems.append(f"engine {self.engine_name}: {missing}")
        except (InvalidInput, EngineUnavailable, MissingCredentials) as exc:
            problems.append(str(exc))
        outcome = "failure" if problems else "success"
        manifest = Manifest.model_validate(
            {
                "status": "failed" if problems else "completed",
                "outcome": outcome,
                "duration": round(time.monotonic() - self.started, 3),
                "metadata": {
                    "agent": AGENT,
                    "version": __version__,
                    "mode": "probe",
                    "engine": {"name": self.engine_name},
                },
                "error": one_line(self.mask("probe: " + "; ".join(problems))) if problems else None,
            }
        )
        self.outputs.write_manifest(manifest)
        return AgentExit.FAILURE if problems else AgentExit.SUCCESS

    def run(self, harden: bool) -> int:
        assert self.outputs is not None
        self.recorder = EvidenceRecorder.create(self.paths.output, self.redactor)
        try:
            spec, engine = self.load()
        except (InvalidInput, EngineUnavailable) as exc:
            return self.fail(str(exc))
        except MissingCredentials as exc:
            return self.fail(f"engine {self.engine_name} cannot run: {exc}")
        missing = engine.missing()
        if missing is not None:
            return self.fail(f"engine {self.engine_name} cannot run: {missing}")
        if harden:
            make_non_dumpable()
        try:
            prompt = compile_prompt(
                spec=spec,
                skills=self.skills,
                input_dir=self.paths.input,
                workspace=self.paths.workspace,
                output=self.paths.output,
            )
        except InvalidInput as exc:
            return self.fail(str(exc))
        budgets, self.limits, watchdog = budgets_for(spec, self.started)
        task = EngineTask(
            system=prompt.system,
            user=prompt.user,
            workspace=self.paths.workspace,
            output=self.paths.output,
            budgets=budgets,
            command_env=self.command_env,
            input=self.paths.input,
        )
        self.recorder.transcript(
            {"kind": "start", "engine": self.engine_name, "skills": [s.name for s in self.skills]}
        )
        with _watchdog(watchdog):
            try:
                result = engine.run(task, self.recorder)
            except Exception as exc:
                result = EngineResult(stop="error", error=self.crashed(exc, "the engine crashed"))
        requires = combined_requires(self.skills)
        return self.judged(result, requires)

    def judged(self, result: EngineResult, requires: SkillRequires) -> int:
        assert self.recorder is not None
        changed = workspace_changed(self.paths.workspace, self.env) if requires.change else None
        verdict = judge(
            result,
            requires=requires,
            exit_codes=self.recorder.exit_codes,
            changed=changed,
            limits=self.limits,
        )
        if verdict.error is not None:
            verdict = Verdict(verdict.outcome, one_line(self.mask(verdict.error)))
        return self.report(verdict, result)


@contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    """SIGALRM after `seconds`: an engine that ignores its deadline is stopped in time."""
    if not hasattr(signal, "setitimer"):
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextmanager
def _signals(run: _Run) -> Iterator[None]:
    """SIGTERM (the runner's `docker stop`, a cancelled job) and the watchdog's SIGALRM stop the
    run with Stopped, unless its outputs are already being written."""

    def stop(signum: int, frame: FrameType | None) -> None:
        if run.finalizing:
            return
        name = "terminated (SIGTERM)" if signum == signal.SIGTERM else "deadline"
        raise Stopped(name)

    previous: dict[signal.Signals, Any] = {}
    for which in (signal.SIGTERM, signal.SIGALRM):
        previous[which] = signal.signal(which, stop)
    try:
        yield
    finally:
        for which, handler in previous.items():
            signal.signal(which, handler)


def _stopped_reason(run: _Run, exc: Stopped) -> str:
    if str(exc) == "deadline":
        timeout = run.limits.timeout or RUNNER_DEFAULT_TIMEOUT
        return f"timeout after {human_duration(timeout)}: the engine overran its deadline"
    return "terminated (SIGTERM) before the run finished"


def run_agent(
    options: Options, environ: Mapping[str, str] | None = None, *, harden: bool = True
) -> int:
    """The whole of `holon agent`; its exit code. `harden`: make the process non-dumpable before
    the engine runs (tests running in-process turn it off)."""
    env = dict(os.environ if environ is None else environ)
    run = _Run(options, env, Paths.from_env(env))
    try:
        run.outputs = Outputs(run.paths.output, run.mask)
    except OSError as exc:
        print(
            f"holon agent: cannot open the output directory {run.paths.output}: "
            f"{exc.strerror or exc}",
            file=sys.stderr,
        )
        return AgentExit.FAILURE
    try:
        with _signals(run):
            try:
                return run.probe() if options.probe else run.run(harden)
            except Stopped as exc:
                stop: Stop = "timeout" if str(exc) == "deadline" else "error"
                return run.fail(_stopped_reason(run, exc), _partial(run, stop))
            except Exception as exc:
                return run.fail(run.crashed(exc, "the agent failed"), _partial(run, "error"))
    finally:
        run.outputs.close()


def _partial(run: _Run, stop: Stop) -> EngineResult | None:
    """What is known of an engine stopped from outside: its usage so far."""
    if run.recorder is None:
        return None
    return EngineResult(stop=stop, usage=run.recorder.total)
