"""Running a coding-agent CLI headlessly and reading its JSON event stream.

The CLI is started from an argv list (never a shell) in the workspace, in a session and process
group of its own, with exactly the environment it is given. The prompt is piped to its standard
input from a thread, so a CLI that does not read it cannot block us. Standard output is read as
one JSON object per line: a line over the limit is skipped (never held in memory) and a line that
is not a JSON object becomes a note, never an error. Standard error is kept as a bounded tail.

The whole group is killed with SIGKILL at the deadline (`timed_out`), when a handler stops the
run (`StopCli`), and also when the CLI exits: anything it left running in the background dies
with it. The leader is only reaped after its group was killed, so its pid (the group id) cannot
have been reused by then.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from holon.errors import InvalidInput
from holon.jsonio import loads
from holon.secrets import mask_secret_looking

STREAM_LINE_LIMIT = 4 * 1024 * 1024  # one event; Claude Code puts whole tool results in one line
STDERR_TAIL = 8 * 1024
_CHUNK = 64 * 1024
_POLL = 0.2  # how often the loop looks whether the CLI exited while a pipe is still open
_DRAIN_GRACE = 2.0  # reading on after the group is gone: a process that escaped it holds a pipe
_SNIPPET = 200


class StopCli(Exception):
    """Raised by an event handler to end the run now (a budget ran out); the group is killed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class CliCall:
    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    stdin: bytes  # the prompt
    deadline: float | None = None  # time.monotonic() value
    line_limit: int = STREAM_LINE_LIMIT


@dataclass(frozen=True)
class CliExit:
    exit_code: int | None  # None when we killed it (deadline or stop) before it exited
    timed_out: bool
    stopped: str | None  # the StopCli reason, if a handler stopped it
    stderr_tail: str
    duration: float
    events: int
    notes: int

    def stderr_line(self) -> str:
        """The last non-empty line of standard error, secret-looking words masked."""
        for line in reversed(self.stderr_tail.splitlines()):
            if line.strip():
                return mask_secret_looking(" ".join(line.split()))[:300]
        return ""


EventHandler = Callable[[dict[str, Any]], None]
NoteHandler = Callable[[str], None]


def snippet(raw: bytes) -> str:
    text = raw[:_SNIPPET].decode("utf-8", "replace")
    return mask_secret_looking(" ".join(text.split()))


class _Lines:
    """Splits chunks into lines of at most `limit` bytes; longer lines are skipped, noted once."""

    def __init__(self, limit: int, on_line: Callable[[bytes], None], on_note: NoteHandler):
        self.limit = limit
        self.on_line = on_line
        self.on_note = on_note
        self.buffer = bytearray()
        self.skipping = False

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if not self.skipping and len(self.buffer) + len(piece) > self.limit:
                self.on_note(f"a stream line over {self.limit} bytes was skipped")
                self.buffer.clear()
                self.skipping = True
            if not self.skipping:
                self.buffer += piece
            if end < 0:
                return
            if not self.skipping:
                self.on_line(bytes(self.buffer))
            self.buffer.clear()
            self.skipping = False
            start = end + 1

    def close(self) -> None:
        if self.buffer and not self.skipping:
            self.on_line(bytes(self.buffer))
        self.buffer.clear()


def _exited(pid: int) -> bool:
    """Whether the process exited, without reaping it (its pid stays ours until we wait)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _feed_stdin(stream: IO[bytes], data: bytes) -> None:
    # A CLI that exits (or is killed) without reading its prompt closes the pipe: not our error.
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
    with contextlib.suppress(OSError, ValueError):
        stream.close()


def run_cli(call: CliCall, on_event: EventHandler, on_note: NoteHandler) -> CliExit:
    """Run the CLI to its end (or the deadline), handing each JSON object it prints to
    `on_event` and everything else worth saying to `on_note`. OSError if it cannot start."""
    started = time.monotonic()
    counts = {"events": 0, "notes": 0}

    def note(text: str) -> None:
        counts["notes"] += 1
        on_note(text)

    def line(raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            value = loads(raw, "stream line")
        except InvalidInput:
            note(f"a stream line that is not JSON: {snippet(raw)}")
            return
        if not isinstance(value, dict):
            note(f"a stream line that is not a JSON object: {snippet(raw)}")
            return
        counts["events"] += 1
        on_event(value)

    proc = subprocess.Popen(
        list(call.argv),
        cwd=call.cwd,
        env=dict(call.env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    writer = threading.Thread(target=_feed_stdin, args=(proc.stdin, call.stdin), daemon=True)
    writer.start()
    lines = _Lines(call.line_limit, line, note)
    stderr_tail = b""
    timed_out = False
    stopped: str | None = None
    ended_at: float | None = None  # when the CLI exited or we killed it
    exited_by_itself = False
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    try:
        while selector.get_map():
            now = time.monotonic()
            if ended_at is None and _exited(proc.pid):
                exited_by_itself = True
                ended_at = now
                _kill_group(proc.pid)
            if ended_at is None and call.deadline is not None and now >= call.deadline:
                timed_out = True
                ended_at = now
                _kill_group(proc.pid)
            if ended_at is not None and now - ended_at > _DRAIN_GRACE:
                note("the CLI's output stayed open after it ended; stopped reading")
                break
            wait = _POLL
            if ended_at is None and call.deadline is not None:
                wait = max(0.0, min(wait, call.deadline - now))
            for key, _ in selector.select(wait):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data == "err":
                    stderr_tail = (stderr_tail + chunk)[-STDERR_TAIL:]
                else:
                    try:
                        lines.feed(chunk)
                    except StopCli as stop:
                        stopped = stop.reason
                        break
            if stopped is not None:
                ended_at = time.monotonic()
                _kill_group(proc.pid)
                break
        if stopped is None:
            with contextlib.suppress(StopCli):
                lines.close()
        if ended_at is None:
            # Both pipes closed first: the CLI is exiting, or closed them and runs on.
            while not _exited(proc.pid):
                if call.deadline is not None and time.monotonic() >= call.deadline:
                    timed_out = True
                    break
                time.sleep(0.05)
            else:
                exited_by_itself = True
    finally:
        selector.close()
        _kill_group(proc.pid)
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            stream.close()
        writer.join(timeout=1.0)
    code = proc.returncode if exited_by_itself else None
    return CliExit(
        exit_code=code,
        timed_out=timed_out,
        stopped=stopped,
        stderr_tail=stderr_tail.decode("utf-8", "replace"),
        duration=time.monotonic() - started,
        events=counts["events"],
        notes=counts["notes"],
    )
