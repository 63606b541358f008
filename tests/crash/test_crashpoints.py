"""The write points' hook (holon/crashpoints.py): names, the Nth passing, the trace, and
nothing at all when no test asked for it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from holon import crashpoints
from holon.crashpoints import CRASH_ENV, TRACE_ENV, CrashHook, arm, github_point, hook_of


@pytest.mark.parametrize(
    ("verb", "path", "name"),
    [
        ("POST", "/repos/o/r/git/blobs", "github:POST git/blobs"),
        ("PATCH", "/repos/o/r/git/refs/heads/holon/issue-1", "github:PATCH git/refs/{ref}"),
        ("POST", "/repos/o/r/issues/12/comments", "github:POST issues/{n}/comments"),
        ("PATCH", "/repos/o/r/issues/comments/991?x=1", "github:PATCH issues/comments/{n}"),
        ("POST", "/api/v3/repos/o/r/check-runs", "github:POST check-runs"),
        (
            "POST",
            "/repos/o/r/pulls/3/comments/10/replies",
            "github:POST pulls/{n}/comments/{n}/replies",
        ),
    ],
)
def test_github_write_points_are_named_by_route(verb: str, path: str, name: str) -> None:
    assert github_point(verb, path) == name


def test_unset_the_hook_is_nothing() -> None:
    assert hook_of({}) is None
    arm({})
    assert not crashpoints.armed()
    crashpoints.point("state.save:before")  # passes by


def test_the_trace_records_each_point_passed(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    hook = CrashHook(None, str(trace))
    hook("a")
    hook("b")
    assert trace.read_text() == "a\nb\n"


def test_the_nth_passing_kills() -> None:
    code = (
        "from holon.crashpoints import arm, point\n"
        "arm({'HOLON_TEST_CRASH_AT': 'x#2'})\n"
        "point('x'); print('first passed', flush=True); point('y'); point('x'); print('never')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in (CRASH_ENV, TRACE_ENV)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == -9
    assert done.stdout == "first passed\n"
