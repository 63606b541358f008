"""`holon serve --agent-secret ANTHROPIC_API_KEY` holds the model key as `holon run` and `holon
action` do (holon/key_custody.py): read once for its runs' key proxies, then gone from its
`os.environ` (nothing it starts inherits it), wiped from the environment block
`/proc/<pid>/environ` shows, and the process non-dumpable. A serve not given the key to forward
keeps its environment as it was: there the same reader finds it (the test can see a leak)."""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.proxy.test_local_proxy import _drop_ptrace
from tests.serve.conftest import EXAMPLE, holon_argv, serve_env

READER = """
import sys
try:
    print(repr(open(f"/proc/{sys.argv[1]}/environ", "rb").read()))
except OSError as exc:
    print(type(exc).__name__)
"""

# The serve in this process, then what it holds afterwards: its os.environ and its own block.
IN_PROCESS = """
import os, sys
from holon.cli.main import main
key = sys.argv[1].encode()
code = main(sys.argv[2:])
block = open("/proc/self/environ", "rb").read()
print(code, "ANTHROPIC_API_KEY" in os.environ, key in block)
"""


@pytest.fixture
def key() -> str:
    return "sk-ant-serve-" + secrets.token_hex(16)


def _agent_flags(forward: bool) -> list[str]:
    agent = ["--agent", f"{sys.executable} -c pass"]
    return [*agent, "--agent-secret", "ANTHROPIC_API_KEY"] if forward else agent


@pytest.mark.parametrize("forward", [True, False])
def test_a_listening_serve_keeps_the_key_from_its_own_user(
    tmp_path: Path, key: str, forward: bool
) -> None:
    argv = holon_argv(
        "serve", "--state-dir", str(tmp_path / "state"), "--listen", "127.0.0.1:0",
        "--secret-env", "HOOK_SECRET", "--dry-run", *_agent_flags(forward),
    )  # fmt: skip
    serve = subprocess.Popen(
        argv,
        env=serve_env(HOOK_SECRET="hook-secret", ANTHROPIC_API_KEY=key),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_drop_ptrace,  # a root as a container's root is: no CAP_SYS_PTRACE
    )
    try:
        assert serve.stdout is not None
        line = serve.stdout.readline()  # serve is open: it read the key long before
        assert line.startswith("listening on "), line + serve.stderr.read()  # type: ignore[union-attr]
        read = subprocess.run(
            [sys.executable, "-c", READER, str(serve.pid)],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=_drop_ptrace,
        )
        seen = read.stdout.strip()
        assert seen, read.stderr
        if forward:
            # Refused (non-dumpable) to its own user, or readable with the key's value wiped.
            assert key not in seen
        else:
            assert key in seen  # not held: the environment it was started with, the leak
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)


def test_serve_drops_the_key_from_its_environment(tmp_path: Path, key: str) -> None:
    argv = [
        "serve", "--state-dir", str(tmp_path / "state"), "--replay",
        str(EXAMPLE / "replay.ndjson"), "--once", "--facts", str(EXAMPLE / "facts.json"),
        "--dry-run", "--agent-secret", "ANTHROPIC_API_KEY",
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, key, *argv],
        env=serve_env(ANTHROPIC_API_KEY=key),
        capture_output=True,
        text=True,
        timeout=120,
    )
    code, in_environ, in_block = done.stdout.split()[-3:]
    assert (in_environ, in_block) == ("False", "False"), done.stdout + done.stderr
    assert code == "2", done.stdout + done.stderr  # the example's serve, as without the key
