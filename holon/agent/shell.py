"""One shell command of the built-in `shell` tool: run, bounded, killed, whole group.

The command runs under `bash -c` (`sh -c` where bash is absent) in the workspace with exactly the
environment it is given (never the agent's own, which holds the model's key), stdin /dev/null,
in a session and process group of its own. It ends when its shell exits, or at its time limit,
when the whole group is killed; processes it left behind in its group are killed when it exits,
so each command starts clean and nothing outlives its time limit. Its output (stdout and stderr
merged) is read as it comes into a bounded buffer that keeps the head and the tail: a command
printing gigabytes costs the cap in memory, never more.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 256 * 1024
# After the shell exited (or was killed), how long its output may take to drain; a process that
# escaped the group and holds the pipe open is not waited for longer.
_DRAIN_SECONDS = 1.0
# Without a pidfd, how often the loop looks whether the shell exited.
_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class CommandRun:
    exit_code: int | None  # None: killed at its time limit
    timed_out: bool
    duration: float
    output: str  # head and tail within the cap, with a note of what was cut
    total_bytes: int
    truncated: bool
    signal: int | None = None  # the signal that ended it, when one did


class BoundedOutput:
    """Keeps the first and the last bytes of a stream within `cap`, and counts the rest."""

    def __init__(self, cap: int) -> None:
        room = max(cap - 80, 2)  # the note about the cut fits in the cap too
        self.cap = cap
        self._head_cap = room // 2
        self._tail_cap = room - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if len(self._head) < self._head_cap:
            take = self._head_cap - len(self._head)
            self._head += chunk[:take]
            chunk = chunk[take:]
        if chunk:
            self._tail += chunk[-self._tail_cap :]
            excess = len(self._tail) - self._tail_cap
            if excess > 0:
                del self._tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head) + len(self._tail)

    def text(self) -> str:
        head = self._head.decode("utf-8", "replace")
        tail = self._tail.decode("utf-8", "replace")
        if not self.truncated:
            return head + tail
        cut = self.total - len(self._head) - len(self._tail)
        return f"{head}\n[... {cut} bytes of output cut here ...]\n{tail}"


def find_shell(env: Mapping[str, str]) -> str:
    """bash from the command's PATH (or the system's), else sh."""
    path = env.get("PATH") or os.defpath
    for name in ("bash", "sh"):
        found = shutil.which(name, path=path) or shutil.which(name, path=os.defpath)
        if found:
            return found
    return "/bin/sh"


def run_command(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    limit: float,
    cap: int,
    shell: str | None = None,
) -> CommandRun:
    """Run `command` for at most `limit` seconds; OSError when it cannot start."""
    env = dict(env)
    started = time.monotonic()
    proc = subprocess.Popen(
        [shell or find_shell(env), "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        close_fds=True,
    )
    assert proc.stdout is not None
    out = BoundedOutput(cap)
    try:
        timed_out = _pump(proc, out, started + limit)
    finally:
        _kill_group(proc.pid)
        proc.stdout.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_DRAIN_SECONDS)
    duration = time.monotonic() - started
    code = proc.returncode
    killed_by = -code if code is not None and code < 0 else None
    exit_code = None if timed_out or code is None else (128 + killed_by if killed_by else code)
    return CommandRun(
        exit_code=exit_code,
        timed_out=timed_out,
        duration=duration,
        output=out.text(),
        total_bytes=out.total,
        truncated=out.truncated,
        signal=None if timed_out else killed_by,
    )


def _pump(proc: subprocess.Popen[bytes], out: BoundedOutput, deadline: float) -> bool:
    """Read the output until the shell exited and the pipe closed; True when the deadline hit.

    The shell's exit is watched without reaping it (a pidfd, else waitid with WNOWAIT), so its
    pid, which is also the group's id, cannot be reused before the group is killed.
    """
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    pidfd = _pidfd(proc.pid)
    timed_out = False
    exited = eof = False
    drain_until: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ, "out")
        if pidfd is not None:
            selector.register(pidfd, selectors.EVENT_READ, "exit")
        try:
            while not (exited and eof):
                now = time.monotonic()
                if drain_until is None and (exited or now >= deadline):
                    timed_out = not exited
                    # Leftovers of the group (or the whole group at the deadline) go now, so
                    # the pipe closes: a background process does not hold the command open.
                    _kill_group(proc.pid)
                    drain_until = now + _DRAIN_SECONDS
                if drain_until is not None and now >= drain_until:
                    break
                wait = (drain_until if drain_until is not None else deadline) - now
                if pidfd is None and not exited:
                    wait = min(wait, _POLL_SECONDS)
                for key, _ in selector.select(max(wait, 0)):
                    if key.data == "exit":
                        exited = True
                        selector.unregister(key.fd)
                    elif _drain(fd, out):
                        eof = True
                        selector.unregister(fd)
                if pidfd is None and not exited:
                    exited = _has_exited(proc.pid)
        finally:
            if pidfd is not None:
                os.close(pidfd)
    return timed_out


def _drain(fd: int, out: BoundedOutput) -> bool:
    """Read what is there now; True at the end of the stream."""
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        out.feed(chunk)


def _pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


def _has_exited(pid: int) -> bool:
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
