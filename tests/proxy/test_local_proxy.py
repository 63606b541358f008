"""A local run given a model key (as fan-out's run job starts it: `holon run --runtime local
--secret-env ANTHROPIC_API_KEY` with the key in its environment): the agent, hunting for the key
in its environment, every process's environment and command line, its parent's memory and every
file it can read, finds it nowhere, yet its model request through HOLON_MODEL_PROXY reaches the
loopback model with the key added, and run.json records what it used. Without the proxy the same
hunt finds the key: the test can see a leak.

Holon's process holds the key, non-dumpable. That stops a process of the same user, which is what
the agent is; a process with CAP_SYS_PTRACE is not stopped. The tests run as whatever user runs
them, root included, so the run is started without CAP_SYS_PTRACE, as a container is by default."""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.runner.record import ModelUsage
from holon.secrets import Redactor
from tests.conftest import spec_for
from tests.support.fake_model import FakeModel, fake_model

HUNTER = Path(__file__).with_name("key_hunter.py")
CAP_SYS_PTRACE = 19
PR_CAPBSET_DROP = 24


def _has_ptrace_capability() -> bool:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_PTRACE & 1)
    return False


def _drop_ptrace() -> None:
    """In the child before exec: no CAP_SYS_PTRACE, for it and all it starts (a root without it
    is what a container's root is by default)."""
    if _has_ptrace_capability():
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) != 0:
            os._exit(97)


@pytest.fixture
def key() -> str:
    # Fresh for each test: no other process on this machine holds it by chance.
    return "sk-ant-localproxy-" + secrets.token_hex(16)


@pytest.fixture
def model(key: str) -> Any:
    with fake_model(key) as fake:
        yield fake


def _holon_run(
    tmp_path: Path, workspace: Path, fake: FakeModel, key: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    spec = spec_for("proxy", context={"env": {"ANTHROPIC_BASE_URL": fake.anthropic_base}})
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec.to_yaml())
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp),
        "ANTHROPIC_API_KEY": key,
    }
    argv = [
        sys.executable, "-m", "holon", "run", "--spec", str(spec_file),
        "--workspace", str(workspace), "--output", str(tmp_path / "out"), "--runtime", "local",
        "--agent", f"{sys.executable} {HUNTER}", "--secret-env", "ANTHROPIC_API_KEY", "--json",
        *extra,
    ]  # fmt: skip
    return subprocess.run(
        argv,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_drop_ptrace,
    )


def _everything(directory: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(directory.rglob("*")) if p.is_file()]


def test_the_agent_finds_no_key_yet_its_request_reaches_the_model_with_it(
    make_repo: Callable[..., Path], tmp_path: Path, key: str, model: FakeModel
) -> None:
    done = _holon_run(tmp_path, make_repo(dirty=False), model, key)
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    dump = out / "dump"
    # It looked: every process's environment it could read (its parent's environment is
    # refused to a user's process, or readable to a root without CAP_SYS_PTRACE, where the key's
    # value is wiped), the runner's run root in its temp dir; its parent's memory was refused.
    refused = json.loads((dump / "refused.json").read_text())
    assert refused["parent/mem"] == "PermissionError"
    assert (dump / "proc.bin").read_bytes().count(b"== /proc/") > 4
    files = (dump / "files.bin").read_bytes()
    assert b"/input/spec.yaml\n" in files
    assert b"tracked.txt\n" in files
    env = json.loads((dump / "env.json").read_text())
    assert env["HOLON_MODEL_PROXY"].startswith(str(tmp_path / "tmp" / "holon-proxy-"))
    assert env["HOLON_MODEL_PROVIDER"] == "anthropic"
    assert "ANTHROPIC_API_KEY" not in env
    assert "ANTHROPIC_BASE_URL" not in env  # the proxy's setting, not the agent's
    # The key nowhere, plain or base64- or URL-encoded: not in what the agent found, nor in
    # anything the run left (run.json, run.log) or printed.
    find = Redactor([key])
    for path, data in _everything(out):
        assert key.encode() not in data, path
        assert not find.found_in(data), path
    assert not find.found_in((done.stdout + done.stderr).encode())
    # Yet the agent's request reached the model, with the key added by Holon's proxy.
    answer = json.loads((dump / "answer.json").read_text())
    assert answer["status"] == 200, answer
    assert "hello from the fake model" in answer["body"]
    [seen] = model.requests
    assert seen.headers["x-api-key"] == key  # the agent's guess dropped
    usage = ModelUsage(input_tokens=14, output_tokens=7, requests=1, model="claude-fake-1")
    record = json.loads((out / "run.json").read_text())
    assert record["runtime"] == "local"
    # The runner masks forwarded secrets in the output it publishes: nothing was there to mask,
    # so the key's absence above is the agent's, not the masking's.
    assert not any("forwarded secrets redacted" in note for note in record["notes"])
    assert record["model_usage"] == usage.model_dump()
    assert json.loads(done.stdout)["model_usage"] == usage.model_dump()
    # The proxy's directory is gone with the run.
    assert not Path(env["HOLON_MODEL_PROXY"]).parent.exists()


def test_without_the_proxy_the_same_hunt_finds_the_key(
    make_repo: Callable[..., Path], tmp_path: Path, key: str, model: FakeModel
) -> None:
    done = _holon_run(tmp_path, make_repo(dirty=False), model, key, "--no-model-proxy")
    assert done.returncode == 0, done.stdout + done.stderr
    dump = tmp_path / "out" / "dump"
    env = json.loads((dump / "env.json").read_text())
    # The agent held the key: its dump named it, and the runner masked it in the output.
    assert env["ANTHROPIC_API_KEY"] == "***"
    assert "HOLON_MODEL_PROXY" not in env
    assert not (dump / "answer.json").exists()
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["model_usage"] is None
    assert (
        "ANTHROPIC_API_KEY passed to the agent: the run asked for no model proxy"
        in (record["notes"])
    )
    assert any("forwarded secrets redacted" in note for note in record["notes"])


HOLDER = """
import os, sys, time
from holon.runner.model_keys import hold_model_keys
if sys.argv[1] == "hold":
    hold_model_keys()
print("ANTHROPIC_API_KEY" in os.environ, flush=True)
time.sleep(60)
"""


READER = """
import sys
pid = sys.argv[1]
try:
    print(repr(open(f"/proc/{pid}/environ", "rb").read()))
except OSError as exc:
    print(type(exc).__name__)
try:
    with open(f"/proc/{pid}/mem", "rb"):
        print("opened")
except OSError as exc:
    print(type(exc).__name__)
"""


@pytest.mark.parametrize("hold", [True, False])
def test_a_process_holding_a_key_keeps_it_from_its_own_user(key: str, hold: bool) -> None:
    env = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": key}
    mode = "hold" if hold else "control"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, mode],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        preexec_fn=_drop_ptrace,
    )
    try:
        assert holder.stdout is not None
        inherited = holder.stdout.readline().strip()
        assert inherited == str(not hold)  # its children would not inherit the key
        # Read as its agent would: the same user, no CAP_SYS_PTRACE.
        reader = subprocess.run(
            [sys.executable, "-c", READER, str(holder.pid)],
            capture_output=True,
            text=True,
            timeout=30,
            preexec_fn=_drop_ptrace,
        )
        environ, mem = reader.stdout.splitlines()
        if hold:
            assert key not in environ
            assert mem == "PermissionError"
        else:
            assert key in environ  # the environment it was started with: the leak
            assert mem == "opened"
    finally:
        holder.kill()
        holder.communicate()
