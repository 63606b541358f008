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


def _checked(args: Sequence[str], returncode: int, stdout: bytes, stderr: bytes) -> bytes:
    if returncode != 0:
        lines = stderr.decode("utf-8", "replace").strip().splitlines()
        detail = lines[-1] if lines else f"exit {returncode}"
        raise GitError(f"git {_command_name(args)} failed: {detail}")
    return stdout


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
    if check:
        return _checked(args, proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


class GitCall:
    """One git command started now, beside others (its answer read by `output` or `ok`): a
    few independent questions to one repository cost one process's time, not their sum."""

    def __init__(
        self, args: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.args = list(args)
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                git_command(args),
                cwd=cwd,
                env=git_env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except FileNotFoundError:
            self._proc = None
        self._result: tuple[int, bytes, bytes] | None = None

    def _finish(self) -> tuple[int, bytes, bytes]:
        if self._result is None:
            if self._proc is None:
                raise GitError("git is not installed or not on PATH")
            out, err = self._proc.communicate()
            self._result = (self._proc.returncode, out, err)
        return self._result

    def output(self, *, check: bool = True) -> bytes:
        """stdout, like `git(args, check=check)`."""
        code, out, err = self._finish()
        return _checked(self.args, code, out, err) if check else out

    def ok(self) -> str | None:
        """stdout (stripped) when git succeeded, else None, like `git_ok(args)`."""
        if self._proc is None:
            return None
        code, out, _ = self._finish()
        return out.decode("utf-8", "surrogateescape").strip() if code == 0 else None

    def kill(self) -> None:
        """Stop it if it still runs and reap it (for a caller that gives up on its answer)."""
        if self._proc is None or self._result is not None:
            return
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()
        self._result = (self._proc.returncode, b"", b"")


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
