"""Running `holon serve` as its own process, as an operator does."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from holon.gateway.envelope import EventEnvelope
from holon.serve.listener import WebhookListener
from tests.serve.webhook_client import NOW, SECRET, Address, Start

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serve"


def holon_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "holon", *args]


def serve_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HOLON_TEST_CRASH_AT"}
    env.update(extra)
    return env


def listening_serve(
    state: Path, secret: str, *extra: str, address: str = "127.0.0.1:0"
) -> tuple[subprocess.Popen[str], int]:
    """`holon serve --listen` (dry run) as its own process, and the port it says it listens on."""
    proc = start_serve(
        "--state-dir", str(state), "--listen", address, "--secret-env", "HOOK_SECRET",
        "--dry-run", *extra, HOOK_SECRET=secret,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    host = address.rpartition(":")[0]
    assert line.startswith(f"listening on http://{host}:"), line
    return proc, int(line.rsplit(":", 1)[1].split("/")[0])


def start_serve(*args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        holon_argv("serve", *args),
        env=serve_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def start() -> Iterator[Start]:
    """Start a listener on a free loopback port; every one is stopped after the test."""
    started: list[WebhookListener] = []

    def _start(sink: Callable[[EventEnvelope], bool], **kw: Any) -> Address:
        kw.setdefault("clock", lambda: NOW)
        secrets = kw.pop("secrets", [SECRET])
        listener = WebhookListener("127.0.0.1", 0, secrets, sink, **kw)
        started.append(listener)
        return listener.start()

    yield _start
    for listener in started:
        listener.stop()
