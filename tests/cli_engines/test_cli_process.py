"""Running a CLI: real subprocesses that misbehave in the ways a CLI can."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from holon.agent.engines.cli_process import CliCall, CliExit, StopCli, _Lines, run_cli
from tests.cli_engines.conftest import alive, wait_gone


def python(tmp_path: Path, source: str, **call: Any) -> CliCall:
    script = tmp_path / "cli.py"
    script.write_text(source)
    defaults: dict[str, Any] = {
        "argv": [sys.executable, str(script)],
        "cwd": tmp_path,
        "env": {"PATH": os.environ.get("PATH", os.defpath), "PIDS": str(tmp_path / "pids")},
        "stdin": b"",
        "deadline": time.monotonic() + 20,
    }
    return CliCall(**{**defaults, **call})


def collect(call: CliCall) -> tuple[CliExit, list[dict[str, Any]], list[str]]:
    events: list[dict[str, Any]] = []
    notes: list[str] = []
    return run_cli(call, events.append, notes.append), events, notes


@pytest.fixture
def strays(tmp_path: Path) -> Iterator[Path]:
    """A file a test's CLI writes the pid of a process that escaped its group into; killed
    at the end whatever happened (only that pid)."""
    pids = tmp_path / "pids"
    yield pids
    if pids.exists():
        for pid in pids.read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


def test_lines_are_split_across_chunks_and_bounded() -> None:
    seen: list[bytes] = []
    notes: list[str] = []
    lines = _Lines(10, seen.append, notes.append)
    for chunk in (b"ab", b"c\nde", b"f\n0123456789abc", b"def\nok\nlast"):
        lines.feed(chunk)
    lines.close()
    assert seen == [b"abc", b"def", b"ok", b"last"]
    assert notes == ["a stream line over 10 bytes was skipped"]
    exactly = _Lines(3, seen.append, notes.append)
    exactly.feed(b"xyz\n")
    assert seen[-1] == b"xyz"


def test_events_notes_exit_code_and_the_unterminated_last_line(tmp_path: Path) -> None:
    call = python(
        tmp_path,
        "import sys\n"
        'print(\'{"type": "a"}\')\n'
        "print('not json')\n"
        "print('\"a string\"')\n"
        "sys.stderr.write('x' * 20000 + '\\nlast words\\n')\n"
        'sys.stdout.write(\'{"type": "b"}\')\n'
        "sys.exit(4)\n",
    )
    exit, events, notes = collect(call)
    assert events == [{"type": "a"}, {"type": "b"}]
    assert notes == [
        "a stream line that is not JSON: not json",
        'a stream line that is not a JSON object: "a string"',
    ]
    assert exit.exit_code == 4
    assert not exit.timed_out
    assert len(exit.stderr_tail) <= 8 * 1024
    assert exit.stderr_line() == "last words"


def test_a_cli_that_never_reads_its_prompt_does_not_block(tmp_path: Path) -> None:
    call = python(tmp_path, "print('{}')\n", stdin=b"p" * (4 * 1024 * 1024))
    exit, events, _ = collect(call)
    assert exit.exit_code == 0
    assert events == [{}]


def test_the_prompt_arrives_on_stdin(tmp_path: Path) -> None:
    call = python(
        tmp_path,
        "import json, sys\nprint(json.dumps({'got': len(sys.stdin.read())}))\n",
        stdin=b"q" * 300000,
    )
    _, events, _ = collect(call)
    assert events == [{"got": 300000}]


def test_what_the_cli_leaves_running_dies_with_it(tmp_path: Path) -> None:
    call = python(
        tmp_path,
        "import os, subprocess\n"
        "child = subprocess.Popen(['sleep', '1000'], stdout=subprocess.DEVNULL,\n"
        "                         stderr=subprocess.DEVNULL)\n"
        "open(os.environ['PIDS'], 'w').write(str(child.pid))\n",
    )
    exit, _, _ = collect(call)
    assert exit.exit_code == 0
    assert wait_gone(int((tmp_path / "pids").read_text()))


def test_a_cli_that_closes_its_output_and_runs_on_times_out(tmp_path: Path) -> None:
    call = python(
        tmp_path,
        "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(1000)\n",
        deadline=time.monotonic() + 1.0,
    )
    started = time.monotonic()
    exit, _, _ = collect(call)
    assert exit.timed_out
    assert exit.exit_code is None
    assert time.monotonic() - started < 5


@pytest.mark.slow
def test_an_escaped_process_holding_the_output_does_not_hold_the_run(
    tmp_path: Path, strays: Path
) -> None:
    # A grandchild in a new session is out of the group's reach and keeps stdout open: reading
    # stops a grace period after the CLI itself ended.
    call = python(
        tmp_path,
        "import os, subprocess\n"
        "child = subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
        "open(os.environ['PIDS'], 'w').write(str(child.pid))\n"
        'print(\'{"type": "done"}\')\n',
    )
    started = time.monotonic()
    exit, events, notes = collect(call)
    assert time.monotonic() - started < 6
    assert exit.exit_code == 0
    assert events == [{"type": "done"}]
    assert notes == ["the CLI's output stayed open after it ended; stopped reading"]
    assert alive(int(strays.read_text()))  # out of reach, as said; the fixture ends it


def test_a_handler_stopping_the_run_kills_the_group(tmp_path: Path) -> None:
    call = python(
        tmp_path,
        "import os, subprocess, time\n"
        "child = subprocess.Popen(['sleep', '1000'])\n"
        "open(os.environ['PIDS'], 'w').write(str(child.pid))\n"
        "print('{\"n\": 1}', flush=True)\n"
        "time.sleep(1000)\n",
    )

    def stop(event: dict[str, Any]) -> None:
        raise StopCli("token_budget")

    started = time.monotonic()
    exit = run_cli(call, stop, lambda _: None)
    assert time.monotonic() - started < 5
    assert exit.stopped == "token_budget"
    assert exit.exit_code is None
    assert wait_gone(int((tmp_path / "pids").read_text()))


def test_a_missing_executable_is_an_oserror(tmp_path: Path) -> None:
    call = python(tmp_path, "", argv=[str(tmp_path / "absent")])
    with pytest.raises(OSError):  # noqa: PT011 - FileNotFoundError or PermissionError
        collect(call)
