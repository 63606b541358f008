"""Named write points where crash-safety tests kill the process (docs/serve.md).

`HOLON_TEST_CRASH_AT=NAME` (or `NAME#N`: its Nth passing) makes `holon serve` and `holon action`
kill themselves with SIGKILL when they reach that write point; `HOLON_TEST_CRASH_TRACE=FILE`
appends the name of every write point passed to FILE, one a line (the tests' list of what a
story writes). Neither is for operators. Unset, a write point is one global read and a return.

The points: the controller's own (`after_effect_before_journal`, `after_journal_before_state`,
`after_checkpoint_before_follow_ups`), `state.save:before|after`, `journal.NAME:before|after`
for each journal line written, `workspace.worktree:before|after` around the worktree a run on a
pull request's head gets (holon/executor/workspace.py), and `github:VERB ROUTE:before|after`
around every write request to GitHub (ROUTE the path under the repository, numbers and names
shown as `{n}` and `{ref}`).

`HOLON_TEST_SIGNAL_AT=NAME` (or `NAME:SIGTERM`) makes any Holon process send itself SIGINT (or
the signal named) when it reaches the start-path point NAME (`signal_point`): the tests of an
interruption landing exactly there. The points: `agent.start:before|after` around the local
runtime's `Popen`, `container.create:before|after` around the docker runtime's create call.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Mapping

CRASH_ENV = "HOLON_TEST_CRASH_AT"
SIGNAL_ENV = "HOLON_TEST_SIGNAL_AT"
TRACE_ENV = "HOLON_TEST_CRASH_TRACE"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})

_REPO_PREFIX = re.compile(r"^(?:/api/v3)?/repos/[^/]+/[^/]+/?")
_NUMBER = re.compile(r"(?<=/)[0-9]+(?=/|$)")
_REF = re.compile(r"^(git/refs/|git/ref/)(.+)$")


class CrashHook:
    """Kills the process at the write point `target` names (`NAME` or `NAME#N`); records every
    point passed to `trace` (a file path) when one is given."""

    def __init__(self, target: str | None, trace: str | None = None) -> None:
        name, _, nth = (target or "").partition("#")
        self.name = name or None
        self.nth = int(nth) if nth.isdigit() and int(nth) > 0 else 1
        self.trace = trace
        self.seen = 0

    def __call__(self, point: str) -> None:
        if self.trace:
            with open(self.trace, "a", encoding="utf-8") as handle:
                handle.write(point + "\n")
        if point == self.name:
            self.seen += 1
            if self.seen == self.nth:
                os.kill(os.getpid(), signal.SIGKILL)


_hook: Callable[[str], None] | None = None


def hook_of(environ: Mapping[str, str]) -> CrashHook | None:
    """The hook `environ` asks for, or None (the normal case)."""
    target, trace = environ.get(CRASH_ENV) or None, environ.get(TRACE_ENV) or None
    return CrashHook(target, trace) if target or trace else None


def arm(environ: Mapping[str, str]) -> Callable[[str], None]:
    """Install the process's hook from `environ` (one hook for every write point, so `NAME#N`
    counts them all); the hook to inject into the controller (a no-op when unset)."""
    global _hook
    _hook = hook_of(environ)
    return _hook or _nothing


def point(name: str) -> None:
    """A write point: nothing unless a test armed the hook."""
    if _hook is not None:
        _hook(name)


def signal_point(name: str) -> None:
    """A point where a test may have the process interrupted: nothing unless
    HOLON_TEST_SIGNAL_AT names it. The signal goes to this thread (`raise_signal`), so in the
    main thread its handler runs right here, not some instructions later."""
    target = os.environ.get(SIGNAL_ENV)
    if not target:
        return
    where, _, which = target.rpartition(":")
    if not which.startswith("SIG"):  # no signal named: the whole of it is the point
        where, which = target, ""
    if where == name:
        signal.raise_signal(signal.Signals[which or "SIGINT"])


def armed() -> bool:
    return _hook is not None


def github_point(verb: str, path: str) -> str:
    """The name of a GitHub write request's point: `VERB ROUTE`, ROUTE its path under the
    repository with numbers as `{n}` and a ref's name as `{ref}` (no query)."""
    route = _REPO_PREFIX.sub("", path.partition("?")[0])
    ref = _REF.match(route)
    if ref is not None:
        route = ref.group(1) + "{ref}"
    return f"github:{verb} {_NUMBER.sub('{n}', route)}"


def _nothing(name: str) -> None:
    """No hook: the write points pass by."""


__all__ = [
    "CRASH_ENV",
    "SIGNAL_ENV",
    "TRACE_ENV",
    "CrashHook",
    "arm",
    "armed",
    "github_point",
    "hook_of",
    "point",
    "signal_point",
]
