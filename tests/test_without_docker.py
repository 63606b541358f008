"""Where no Docker engine runs, the docker tests skip with a reason and the rest of the suite holds.

The README promises it; this runs the docker-marked tests in a child pytest against an engine that
is not there (no socket, and a socket nobody listens on) and reads its verdict.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _dead_socket(directory: Path) -> Path:
    path = directory / "docker.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))  # bound, never listening: connecting is refused
    sock.close()
    return path


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["no-socket", "refusing-socket"])
def test_docker_tests_skip_without_an_engine(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "absent.sock" if engine == "no-socket" else _dead_socket(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "HOLON_REQUIRE_DOCKER"}
    env["DOCKER_HOST"] = f"unix://{path}"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "docker", "-p", "no:cacheprovider", "-rs"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    tail = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " skipped" in tail
    assert "failed" not in tail
    assert "error" not in tail
    assert "no Docker engine reachable" in proc.stdout
