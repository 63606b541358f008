"""The narrow git edge the runner needs: run one git command, fail with one line."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from holon.errors import HolonError

# Settings that keep our own git calls independent of the user's configuration and fast.
_NEUTRAL = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.quotePath=false",
)


class GitError(HolonError):
    """A git command the runner relies on failed."""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GIT_") or k in ("GIT_CONFIG_NOSYSTEM",)
    }
    env.update({"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"})
    if extra:
        env.update(extra)
    return env


def git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    check: bool = True,
) -> bytes:
    """Run git and return stdout; a failure raises GitError with git's first error line."""
    try:
        proc = subprocess.run(
            ["git", *_NEUTRAL, *args],
            cwd=cwd,
            env=git_env(env),
            input=input,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = lines[-1] if lines else f"exit {proc.returncode}"
        raise GitError(f"git {args[0]} failed: {detail}")
    return proc.stdout


def git_ok(args: Sequence[str], *, cwd: Path | None = None) -> str | None:
    """stdout (stripped) when git succeeds, else None: for questions whose answer may be 'no'."""
    proc = subprocess.run(
        ["git", *_NEUTRAL, *args], cwd=cwd, env=git_env(), capture_output=True, check=False
    )
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape").strip()
