"""The `local` backend: the agent as a subprocess, with the contract layout under a temp root.

For development, and for container jobs that already run inside the agent image. The agent gets a
minimal environment (no inherited tokens), its own session, and every process it started is killed
when it exits or times out, including ones that left its session or dropped its environment
(holon.runner.reaper). Its output is streamed to the run's AgentLog while it runs.

A model key (ANTHROPIC_API_KEY, OPENAI_API_KEY) is not passed to it: as with the docker runtime,
a key proxy for the run (`model_proxy.py`) holds it, on a unix socket in a fresh private directory
whose path the agent gets as HOLON_MODEL_PROXY (`model_keys.py`). The key then lives only in this
process, which the command line makes non-dumpable (`model_keys.hold_model_keys`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path

from holon.contract.layout import ENV_RUN_ID, Layout
from holon.crashpoints import signal_point
from holon.errors import InvalidInput, Unavailable
from holon.held_signals import HeldSignals
from holon.runner.backend import BackendOptions, Execution, Job
from holon.runner.model_keys import proxy_model_keys
from holon.runner.reaper import ENV_RUN_TAG, children_of_self, end_run, run_tag, subreaper

# Inherited from the invoking environment; everything else must be passed explicitly.
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "TERM")
_GRACE_SECONDS = 2.0
_CHUNK = 256 * 1024


class LocalBackend:
    name = "local"

    def __init__(self, options: BackendOptions) -> None:
        if not options.agent:
            raise InvalidInput(
                "the local runtime needs --agent CMD (the command that runs the agent)"
            )
        # Container limits: a subprocess would run without them, and silently is worse than not.
        for flag, value in (("--memory", options.memory), ("--cpus", options.cpus)):
            if value is not None:
                raise InvalidInput(
                    f"{flag}: the local runtime cannot enforce a container limit "
                    "(use --runtime docker, or leave it out)"
                )
        argv = list(options.agent)
        # The agent runs with the snapshot as its cwd; a relative program means relative to ours.
        if "/" in argv[0] and not Path(argv[0]).is_absolute():
            argv[0] = str(Path(argv[0]).absolute())
        self.argv = argv
        self.options = options

    def preflight(self) -> None:
        program = self.argv[0]
        if ("/" in program and not Path(program).is_file()) or (
            "/" not in program and shutil.which(program) is None
        ):
            raise Unavailable(f"agent command not found: {program}")

    def close(self) -> None:
        pass

    def execute(self, job: Job) -> Execution:
        given = dict(job.env)
        with HeldSignals():  # the proxy started is the proxy stopped below
            proxy, notes = proxy_model_keys(
                given, self.options, socket_path=None, passed="to the agent"
            )
        try:
            execution = self._execute(job, given)
        finally:
            if proxy is not None:
                proxy.stop()
        return dataclasses.replace(
            execution,
            notes=[*notes, *execution.notes],
            model_usage=proxy.usage() if proxy is not None else None,
        )

    def _execute(self, job: Job, given: dict[str, str]) -> Execution:
        layout = Layout(
            input=job.paths.input, workspace=job.paths.workspace, output=job.paths.output
        )
        env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
        env.update(given)
        env.update(layout.env())
        env[ENV_RUN_ID] = job.run_id
        tag = env[ENV_RUN_TAG] = run_tag(job.run_id)
        argv = [*self.argv, "--probe"] if job.probe else list(self.argv)
        notes: list[str] = []
        with subreaper():
            before = children_of_self()
            started = datetime.now(UTC)
            signal_point("agent.start:before")
            # From the start of the agent until the `try` below owns it, an interruption waits:
            # raised inside Popen after the fork, or before `proc` is assigned, it would leave
            # the agent running with nothing to end it.
            held = HeldSignals().hold()
            try:
                proc, pump = self._start(job, argv, env)
            except BaseException:
                held.release()
                raise
            timed_out = False
            try:
                held.release()  # a signal that came meanwhile unwinds from here: the agent ends
                if job.on_start is not None:
                    job.on_start()
                proc.wait(timeout=job.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _signal_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    _signal_group(proc.pid, signal.SIGKILL)
                    proc.wait()
            except BaseException:
                with HeldSignals():  # a second signal does not cut the ending short
                    end_run(_unreaped(proc), tag, before)
                    proc.wait()
                raise
            finally:
                with HeldSignals():
                    left = end_run(_unreaped(proc), tag, before)
                    # Every writer of the pipe is gone now, so the pump reaches its end.
                    pump.join(timeout=_GRACE_SECONDS)
                if left:
                    notes.append(f"killed {left} process(es) the agent left running")
                if pump.is_alive():
                    notes.append("the agent's output stream did not close; run.log may be short")
        ended = datetime.now(UTC)
        exit_code = None if timed_out else proc.returncode
        return Execution(exit_code, timed_out, started, ended, notes)

    @staticmethod
    def _start(
        job: Job, argv: list[str], env: dict[str, str]
    ) -> tuple[subprocess.Popen[bytes], threading.Thread]:
        """The agent started, and the thread that streams its output to the run's log (called
        with SIGINT and SIGTERM held: nothing here is interrupted)."""
        read_end, write_end = os.pipe()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=job.paths.workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_end)
            raise Unavailable(f"cannot start agent {argv[0]!r}: {exc.strerror}") from None
        finally:
            os.close(write_end)
        try:
            signal_point("agent.start:after")
            pump = threading.Thread(target=_pump, args=(read_end, job), daemon=True)
            pump.start()
        except BaseException:  # no thread to be had: the agent is ended here
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
            os.close(read_end)
            raise
        return proc, pump


def _unreaped(proc: subprocess.Popen[bytes]) -> int | None:
    """The agent's pid while it is still ours to signal (not yet reaped, so not reusable)."""
    return proc.pid if proc.returncode is None else None


def _pump(fd: int, job: Job) -> None:
    """Copy the agent's output to its log as it comes."""
    try:
        while chunk := os.read(fd, _CHUNK):
            job.log.write(chunk)
    finally:
        os.close(fd)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
