"""The narrow git edge the runner needs: run one git command, fail with one line.

Every call ignores system and global configuration (a `local` agent can write `~/.gitconfig`),
hooks, fsmonitor and attribute files outside the tree, and never fetches: the only configuration
Holon's git sees is the repository config of the git directory it names, and the runner names only
directories it wrote itself (docs/security.md).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from holon.errors import OperationalError

# Command-line settings outrank every config file git reads: nothing the agent wrote can start a
# program through them.
_NEUTRAL = (
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "core.attributesFile=/dev/null"),
    *("-c", "core.quotePath=false"),
    *("-c", "protocol.allow=never"),
)

_ISOLATED = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_NO_REPLACE_OBJECTS": "1",
}


class GitError(OperationalError):
    """A git command the runner relies on failed."""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"})
    env.update(_ISOLATED)
    if extra:
        env.update(extra)
    return env


def _command_name(args: Sequence[str]) -> str:
    """The subcommand, past any leading `-c name=value` settings."""
    i = 0
    while i < len(args) and args[i] == "-c":
        i += 2
    return args[i] if i < len(args) else "git"


def git_command(args: Sequence[str]) -> list[str]:
    """The argv of a git call with Holon's neutral settings, for callers that stream."""
    return ["git", *_NEUTRAL, *args]


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
            git_command(args),
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
        raise GitError(f"git {_command_name(args)} failed: {detail}")
    return proc.stdout


def git_ok(
    args: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """stdout (stripped) when git succeeds, else None: for questions whose answer may be 'no'."""
    proc = subprocess.run(
        git_command(args), cwd=cwd, env=git_env(env), capture_output=True, check=False
    )
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "surrogateescape").strip()
