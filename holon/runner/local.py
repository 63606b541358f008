"""The `local` backend: the agent as a subprocess, with the contract layout under a temp root.

For development, and for container jobs that already run inside the agent image. The agent gets a
minimal environment (no inherited tokens), its own session, and every process it started is killed
when it exits or times out, including children that left its process group.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

from holon.contract.layout import ENV_RUN_ID, Layout
from holon.errors import InvalidInput, Unavailable
from holon.runner.backend import BackendOptions, Execution, Job

# Inherited from the invoking environment; everything else must be passed explicitly.
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "TERM")
_GRACE_SECONDS = 2.0


class LocalBackend:
    name = "local"

    def __init__(self, options: BackendOptions) -> None:
        if not options.agent:
            raise InvalidInput(
                "the local runtime needs --agent CMD (the command that runs the agent)"
            )
        argv = list(options.agent)
        # The agent runs with the snapshot as its cwd; a relative program means relative to ours.
        if "/" in argv[0] and not Path(argv[0]).is_absolute():
            argv[0] = str(Path(argv[0]).absolute())
        self.argv = argv

    def preflight(self) -> None:
        program = self.argv[0]
        if ("/" in program and not Path(program).is_file()) or (
            "/" not in program and shutil.which(program) is None
        ):
            raise Unavailable(f"agent command not found: {program}")

    def close(self) -> None:
        pass

    def execute(self, job: Job) -> Execution:
        layout = Layout(
            input=job.paths.input, workspace=job.paths.workspace, output=job.paths.output
        )
        env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
        env.update(job.env)
        env.update(layout.env())
        env[ENV_RUN_ID] = job.run_id
        argv = [*self.argv, "--probe"] if job.probe else list(self.argv)
        notes: list[str] = []
        started = datetime.now(UTC)
        with job.paths.log.open("ab") as log:
            try:
                proc = subprocess.Popen(
                    argv,
                    cwd=job.paths.workspace,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                raise Unavailable(f"cannot start agent {argv[0]!r}: {exc.strerror}") from None
            timed_out = False
            try:
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
                _kill_all(proc.pid, job.run_id)
                proc.wait()
                raise
            finally:
                left = _kill_all(proc.pid, job.run_id)
                if left:
                    notes.append(f"killed {left} process(es) the agent left running")
        ended = datetime.now(UTC)
        exit_code = None if timed_out else proc.returncode
        return Execution(exit_code, timed_out, started, ended, notes)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _tagged_processes(run_id: str) -> list[int]:
    """Processes carrying this run's HOLON_RUN_ID: the agent's descendants, even after setsid."""
    marker = f"{ENV_RUN_ID}={run_id}".encode() + b"\0"
    found = []
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                if marker in handle.read():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def _kill_all(pgid: int, run_id: str) -> int:
    """Kill the agent's process group and any process still tagged with the run id."""
    _signal_group(pgid, signal.SIGKILL)
    killed = 0
    if not os.path.isdir("/proc"):
        return killed
    # A few passes: a process may fork while we look.
    for _ in range(5):
        pids = _tagged_processes(run_id)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.01)
    return killed
