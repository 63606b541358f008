"""The collector paused during a command's start-up is always resumed: by the CLI before any
command but `holon action`, and for `holon action` by its serve opening (holon/gcpause.py)."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from holon import gcpause
from holon.serve.serve import Serve, ServeOptions


@pytest.fixture
def collector() -> Iterator[None]:
    """Leaves the test process's collector as it found it (enabled, nothing paused)."""
    yield
    gcpause.resume()
    gc.enable()


def test_pause_disables_and_resume_enables_with_the_start_up_frozen(collector: None) -> None:
    gcpause.pause()
    assert not gc.isenabled()
    before = gc.get_freeze_count()
    made = [object() for _ in range(10)]  # start-up's objects: frozen out of collection
    gcpause.resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() > before
    assert made
    gc.unfreeze()  # this test process is long-lived: give its objects back


def test_resume_without_a_pause_changes_nothing(collector: None) -> None:
    gc.disable()  # someone else's choice, not a pause: resume leaves it alone
    gcpause.resume()
    assert not gc.isenabled()


def test_a_serve_opening_resumes_the_collector(collector: None, tmp_path: Path) -> None:
    serve = Serve(ServeOptions(state_dir=tmp_path / "state", dry_run=True, once=True))
    gcpause.pause()
    serve.open()
    try:
        assert gc.isenabled()
    finally:
        serve.close()
        gc.unfreeze()


def test_the_cli_resumes_the_collector_before_a_command_runs() -> None:
    # `entry()` pauses; a command without RESUMES_GC (here `skills`) runs with it on again.
    code = (
        "import gc, sys\n"
        "import holon.cli.main as m, holon.cli.skills_cmd as cmd\n"
        "seen = []\n"
        "cmd.main = lambda args: seen.append(gc.isenabled()) or 0\n"
        "sys.argv = ['holon', 'skills', 'list']\n"
        "try:\n"
        "    m.entry()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('collector', seen)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert "collector [True]" in proc.stdout, proc.stdout + proc.stderr


def test_holon_action_resumes_it_itself_when_its_serve_opens() -> None:
    from holon.cli import action_cmd

    assert action_cmd.RESUMES_GC is True  # and Serve.open resumes (the test above it)
