"""Running `holon serve` as its own process, as an operator does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serve"


def holon_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "holon", *args]


def serve_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HOLON_TEST_CRASH_AT"}
    env.update(extra)
    return env


def start_serve(*args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        holon_argv("serve", *args),
        env=serve_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
