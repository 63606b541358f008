"""A cancelled job (SIGTERM) or Ctrl-C (SIGINT) stops the agent and still records the run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import AGENT_SCRIPT


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_interrupts_run(
    sig: signal.Signals, tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "version: v1\nkind: Holon\ngoal: {description: t}\ncontext: {env: {MODE: sleep}}\n"
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "holon",
            "run",
            "--spec",
            str(spec),
            "--workspace",
            str(make_repo()),
            "--output",
            str(out),
            "--runtime",
            "local",
            "--agent",
            f"sh {AGENT_SCRIPT}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while not (out / "ticks").exists():
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert b"interrupted" in err
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "interrupted"
    size = (out / "ticks").stat().st_size
    time.sleep(0.5)
    assert (out / "ticks").stat().st_size == size
