"""An interruption (SIGINT, SIGTERM) landing on the start path of either backend, at the exact
point where the agent exists but Holon does not yet hold it (HOLON_TEST_SIGNAL_AT: after Popen,
after the container's create call), or before it starts: `holon run` exits 130 with the run
recorded as interrupted, no traceback, and nothing of the agent left (no process carrying the
run's marker in its environment, no container with the run's label)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from holon.crashpoints import SIGNAL_ENV, signal_point
from holon.held_signals import HeldSignals
from holon.runner.docker_backend import RUN_LABEL
from tests.conftest import AGENT_SCRIPT

SIGNALS = [signal.SIGINT, signal.SIGTERM]


def _marked(mark: str) -> list[int]:
    """Live processes with MARK=<mark> in their environment (the agent and all it started)."""
    needle = f"MARK={mark}".encode() + b"\0"
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                if needle not in handle.read():
                    continue
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                if handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                    continue
        except OSError:
            continue
        found.append(int(entry.name))
    return found


def _holon_run(
    tmp_path: Path, workspace: Path, at: str, sig: signal.Signals, *backend: str
) -> tuple[subprocess.CompletedProcess[str], Path, str]:
    mark = uuid.uuid4().hex
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "version: v1\nkind: Holon\ngoal: {description: t}\n"
        f"context: {{env: {{MODE: sleep, MARK: {mark}}}}}\n"
    )
    out = tmp_path / "out"
    env = {**os.environ, SIGNAL_ENV: f"{at}:{sig.name}"}
    argv = [sys.executable, "-m", "holon", "run", "--spec", str(spec)]
    argv += ["--workspace", str(workspace), "--output", str(out), *backend]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    return done, out, mark


def _assert_interrupted(done: subprocess.CompletedProcess[str], out: Path) -> dict[str, Any]:
    assert done.returncode == 130, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "interrupted" in done.stderr
    record: dict[str, Any] = json.loads((out / "run.json").read_text())
    assert record["status"] == "interrupted"
    return record


def _assert_no_process(mark: str) -> None:
    time.sleep(0.3)  # an orphan started just before Holon exited has exec'd by now
    left = _marked(mark)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "the agent was left running"


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("at", ["agent.start:before", "agent.start:after"])
def test_local_start_interrupted(
    at: str, sig: signal.Signals, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    agent = ["--runtime", "local", "--agent", f"sh {AGENT_SCRIPT}"]
    done, out, mark = _holon_run(tmp_path, make_repo(), at, sig, *agent)
    _assert_interrupted(done, out)
    _assert_no_process(mark)


@pytest.mark.docker
@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("at", ["container.create:before", "container.create:after"])
def test_docker_start_interrupted(
    at: str,
    sig: signal.Signals,
    agent_image: str,
    docker_client: Any,
    tmp_path: Path,
    make_repo: Callable[..., Path],
) -> None:
    backend = ["--runtime", "docker", "--image", agent_image]
    done, out, mark = _holon_run(tmp_path, make_repo(), at, sig, *backend)
    record = _assert_interrupted(done, out)
    by_label = docker_client.containers.list(
        all=True, filters={"label": f"{RUN_LABEL}={record['run_id']}"}
    )
    by_mark = [
        c
        for c in docker_client.containers.list(all=True, filters={"label": RUN_LABEL})
        if f"MARK={mark}" in (c.attrs.get("Config", {}).get("Env") or [])
    ]
    for container in {c.id: c for c in by_label + by_mark}.values():
        container.remove(force=True)
    assert by_label == [], "the agent's container was left behind"
    assert by_mark == [], "the agent's container was left behind"


@pytest.fixture
def handlers() -> Iterator[list[int]]:
    """SIGINT and SIGTERM recorded by this test's own handlers, put back afterwards."""
    seen: list[int] = []
    previous = {s: signal.signal(s, lambda n, f: seen.append(n)) for s in SIGNALS}
    yield seen
    for which, handler in previous.items():
        signal.signal(which, handler)


def test_held_signals_are_delivered_on_release(handlers: list[int]) -> None:
    held = HeldSignals().hold()
    signal.raise_signal(signal.SIGTERM)
    signal.raise_signal(signal.SIGINT)
    assert handlers == []  # recorded, not handled
    held.release()
    assert handlers == [signal.SIGTERM, signal.SIGINT]
    held.release()  # idempotent
    assert handlers == [signal.SIGTERM, signal.SIGINT]
    signal.raise_signal(signal.SIGINT)  # the handlers are back
    assert handlers == [signal.SIGTERM, signal.SIGINT, signal.SIGINT]


def test_a_raising_handler_unwinds_from_release_with_every_handler_back() -> None:
    reached = []

    def held_interrupt() -> None:
        with HeldSignals():
            signal.raise_signal(signal.SIGINT)
            reached.append(True)  # the handler did not run inside the block

    with pytest.raises(KeyboardInterrupt):
        held_interrupt()
    assert reached == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_holding_is_a_no_op_outside_the_main_thread(handlers: list[int]) -> None:
    def hold() -> None:
        with HeldSignals() as held:
            assert not held.holding

    thread = threading.Thread(target=hold)
    thread.start()
    thread.join()
    assert signal.getsignal(signal.SIGINT) is not None


def test_a_signal_point_delivers_only_the_named_signal(
    handlers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    signal_point("agent.start:after")  # unset: nothing
    monkeypatch.setenv(SIGNAL_ENV, "agent.start:after:SIGTERM")
    signal_point("agent.start:before")
    assert handlers == []
    signal_point("agent.start:after")
    assert handlers == [signal.SIGTERM]
    monkeypatch.setenv(SIGNAL_ENV, "agent.start:after")
    signal_point("agent.start:after")
    assert handlers == [signal.SIGTERM, signal.SIGINT]


def test_a_signal_inside_popen_after_the_fork_still_ends_the_agent(
    tmp_path: Path, make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window no hook inside Holon reaches: `Popen` has forked the agent but not returned
    (it waits for the exec's report), and Ctrl-C lands there."""
    from holon.errors import Interrupted
    from holon.runner import RunRequest, local, run
    from tests.conftest import spec_for

    real = subprocess.Popen

    def interrupted_popen(argv: Any, *args: Any, **kwargs: Any) -> Any:
        proc = real(argv, *args, **kwargs)
        if str(AGENT_SCRIPT) in argv:  # the agent's, not git's
            signal.raise_signal(signal.SIGINT)  # as if inside, before Popen returns
        return proc

    monkeypatch.setattr(local.subprocess, "Popen", interrupted_popen)
    mark = uuid.uuid4().hex
    request = RunRequest(
        spec=spec_for("sleep", context={"env": {"MODE": "sleep", "MARK": mark}}),
        workspace=make_repo(),
        output=tmp_path / "out",
        runtime="local",
        agent=["sh", str(AGENT_SCRIPT)],
        work_dir=tmp_path,
    )
    with pytest.raises(Interrupted):
        run(request)
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["status"] == "interrupted"
    _assert_no_process(mark)


@pytest.mark.parametrize("forget", [False, True])
def test_a_handled_interrupt_exits_with_its_code(forget: bool, tmp_path: Path) -> None:
    """CPython 3.11 notes a KeyboardInterrupt that passed through `exec` of a string (as
    dataclasses build their methods) as unhandled, however it was caught, and at exit kills the
    process with SIGINT: `forget_handled_interrupt` keeps the exit code Holon chose."""
    import ctypes

    try:
        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt")
    except ValueError:
        pytest.skip("this interpreter keeps no such flag")
    script = (
        "import ctypes, sys\n"
        "from holon.held_signals import forget_handled_interrupt\n"
        "ctypes.c_int.in_dll(ctypes.pythonapi, '_Py_UnhandledKeyboardInterrupt').value = 1\n"
        f"{'forget_handled_interrupt()' if forget else 'pass'}\n"
        "sys.exit(130)\n"
    )
    # Run as `holon` is, with -m (the flag is read only on that way out).
    (tmp_path / "exit_probe.py").write_text(script)
    argv = [sys.executable, "-m", "exit_probe"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=60)
    assert done.returncode == (130 if forget else -signal.SIGINT), done.stderr
