"""The `shell` tool: real commands, their time limits, their output bound, their environment."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from holon.agent.shell import BoundedOutput, find_shell, run_command
from holon.agent.tools import Toolbox
from tests.agent_loop.fakes import FakeRecorder, command_env, make_task, shell

REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in (b"Z", b"X")


def _gone_soon(pid: int) -> bool:
    stop = time.monotonic() + 2
    while _alive(pid) and time.monotonic() < stop:
        time.sleep(0.01)
    return not _alive(pid)


def test_a_command_runs_in_the_workspace_and_is_recorded_with_its_id(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    recorder = FakeRecorder()
    tools = Toolbox(task, recorder)
    first = tools.execute(shell("pwd; echo out; echo err >&2; exit 3"))
    second = tools.execute(shell("true"))
    assert first.text.startswith("command #1 exited 3")
    assert str(task.workspace) in first.text
    assert "out" in first.text
    assert "err" in first.text  # stderr merged
    assert not first.is_error  # a failing command is a result, not a misuse
    assert second.text.startswith("command #2 exited 0")
    assert [c.exit_code for c in recorder.commands] == [3, 0]
    assert recorder.commands[0].command == "pwd; echo out; echo err >&2; exit 3"
    assert "err" in recorder.commands[0].output_tail


def test_stdin_is_empty(tmp_path: Path) -> None:
    tools = Toolbox(make_task(tmp_path), FakeRecorder())
    # `cat` would wait for ever on an inherited terminal; /dev/null ends it at once.
    result = tools.execute(shell("cat; echo read-nothing", timeout=5))
    assert "exited 0" in result.text
    assert "read-nothing" in result.text


def test_a_command_that_never_ends_is_killed_with_its_whole_group(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    recorder = FakeRecorder()
    tools = Toolbox(task, recorder)
    started = time.monotonic()
    result = tools.execute(
        shell(
            "sleep 300 & echo $! > child.pid; echo started; while :; do sleep 1; done", timeout=0.5
        )
    )
    took = time.monotonic() - started
    assert took < 3
    assert "command #1 timed out after 0.5 s (its timeout) and was killed" in result.text
    assert "started" in result.text
    record = recorder.commands[0]
    assert record.timed_out
    assert record.exit_code is None
    child = int((task.workspace / "child.pid").read_text())
    assert _gone_soon(child), "the background sleep outlived its command"


def test_the_command_time_limit_and_the_deadline_bound_a_command(tmp_path: Path) -> None:
    recorder = FakeRecorder()
    capped = Toolbox(make_task(tmp_path / "a", command_timeout=0.3), recorder)
    result = capped.execute(shell("sleep 30", timeout=100))
    assert "timed out after 0.3 s (the command time limit)" in result.text
    deadline = time.monotonic() + 0.4
    late = Toolbox(make_task(tmp_path / "b", deadline=deadline), recorder)
    result = late.execute(shell("sleep 30"))
    assert "(the run's deadline) and was killed" in result.text
    assert [c.timed_out for c in recorder.commands] == [True, True]
    result = late.execute(shell("echo never"))
    assert result.is_error
    assert result.text == "not run: the run's deadline has passed"
    assert len(recorder.commands) == 2


def test_processes_a_command_leaves_behind_do_not_hold_it_open(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    tools = Toolbox(task, FakeRecorder())
    started = time.monotonic()
    # The background sleep keeps the output pipe open; the command still ends with its shell.
    result = tools.execute(shell("sleep 300 & echo $! > child.pid; echo done"))
    assert time.monotonic() - started < 3
    assert "exited 0" in result.text
    assert _gone_soon(int((task.workspace / "child.pid").read_text()))


def test_fifty_megabytes_of_output_cost_the_cap_not_the_output(tmp_path: Path) -> None:
    cap = 16 * 1024
    recorder = FakeRecorder()
    tools = Toolbox(make_task(tmp_path, output_cap=cap), recorder)
    tracemalloc.start()
    try:
        result = tools.execute(
            shell("echo FIRST; head -c 50000000 /dev/zero | tr '\\0' x; echo; echo LAST")
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "exited 0" in result.text
    assert "bytes of output, head and tail shown" in result.text
    assert "FIRST" in result.text
    assert result.text.rstrip().endswith("LAST")
    assert "bytes of output cut here" in result.text
    assert len(result.text.encode()) < cap + 200
    assert len(recorder.commands[0].output_tail.encode()) <= cap
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes while reading 50 MB"


def test_bounded_output_keeps_head_and_tail() -> None:
    out = BoundedOutput(100 + 80)
    for i in range(1000):
        out.feed(f"{i:04d}".encode())
    text = out.text()
    assert text.startswith("00000001")
    assert text.endswith("0999")
    assert out.total == 4000
    assert "[... 3900 bytes of output cut here ...]" in text
    small = BoundedOutput(1000)
    small.feed(b"all of it")
    assert small.text() == "all of it"
    assert not small.truncated


def test_commands_get_the_task_environment_not_the_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLON_TEST_SECRET", "sk-ant-test-not-for-commands")
    task = make_task(tmp_path)
    tools = Toolbox(task, FakeRecorder())
    result = tools.execute(shell("env"))
    assert "sk-ant-test-not-for-commands" not in result.text
    assert "HOLON_TEST_SECRET" not in result.text
    assert f"PATH={command_env()['PATH']}" in result.text


def test_a_command_cannot_read_the_agents_environment_through_proc() -> None:
    """The agent's own environment holds the model's key; its commands run as the same user."""
    script = textwrap.dedent(
        r"""
        import sys
        from pathlib import Path
        from holon.agent.hygiene import make_non_dumpable
        from holon.agent.shell import run_command
        if sys.argv[1] == "hide":
            assert make_non_dumpable()
        run = run_command("tr '\\0' '\\n' < /proc/$PPID/environ", cwd=Path("/"),
                          env={"PATH": "/usr/bin:/bin"}, limit=10, cap=100000)
        print(run.exit_code)
        print(run.output)
        """
    )
    # holon.agent.shell needs only the standard library, so any Python 3.11 runs the script.
    env = {"PYTHONPATH": str(REPO), "HOLON_TEST_SECRET": "sk-ant-in-the-agents-env"}
    python, as_user = _unprivileged_python()

    def agent(mode: str) -> str:
        return subprocess.run(
            [python, "-c", script, mode],
            cwd="/",
            env=env,
            capture_output=True,
            text=True,
            check=True,
            **as_user,
        ).stdout

    assert "sk-ant-in-the-agents-env" in agent("open")  # the test can see a leak
    hidden = agent("hide")
    assert "sk-ant-in-the-agents-env" not in hidden
    assert hidden.splitlines()[0] != "0"


def _unprivileged_python() -> tuple[str, dict[str, Any]]:
    """A Python and the user to run it as: root reads any process's /proc files (here, with
    CAP_SYS_PTRACE), so as root the agent runs as nobody, as it would in an image without it."""
    if os.geteuid() != 0:
        return sys.executable, {}
    as_user: dict[str, Any] = {"user": 65534, "group": 65534, "extra_groups": []}
    for python in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.path.exists(python):
            continue
        try:
            probe = subprocess.run(
                [python, "-c", "import sys; assert sys.version_info >= (3, 11)"],
                cwd="/",
                capture_output=True,
                check=False,
                **as_user,
            )
        except PermissionError:  # nobody may not reach this interpreter
            continue
        if probe.returncode == 0:
            return python, as_user
    pytest.skip("no Python 3.11 that the user nobody can run")


def test_sh_is_used_where_bash_is_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real_sh = next(p for p in ("/bin/sh", "/usr/bin/sh") if Path(p).exists())
    (bin_dir / "sh").symlink_to(real_sh)
    monkeypatch.setattr(os, "defpath", str(bin_dir))
    env = {"PATH": str(bin_dir)}
    assert find_shell(env) == str(bin_dir / "sh")
    run = run_command("echo $0", cwd=tmp_path, env=env, limit=5, cap=1000)
    assert run.output.strip() == str(bin_dir / "sh")


def test_a_killed_command_reports_its_signal(tmp_path: Path) -> None:
    tools = Toolbox(make_task(tmp_path), FakeRecorder())
    result = tools.execute(shell("kill -9 $$"))
    assert "was killed by signal 9 (exit 137)" in result.text


def test_bad_commands_are_errors_for_the_model(tmp_path: Path) -> None:
    recorder = FakeRecorder()
    tools = Toolbox(make_task(tmp_path), recorder)
    assert "the command contains a NUL character" in tools.execute(shell("echo \0")).text
    assert "bad arguments for shell" in tools.execute(shell("")).text
    result = tools.execute(shell("true", timeout=-1))
    assert result.is_error
    assert "timeout" in result.text
    assert recorder.commands == []
