"""The entry point's error tiers: internal errors always name their log, operational failures have
their own code, and a reader that closes the pipe ends a command quietly."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from holon import errorlog
from holon.cli import main as cli
from holon.errors import HolonError
from holon.runner.git import GitError
from holon.runner.snapshot import SnapshotError

REPO = Path(__file__).resolve().parents[2]
EVIDENCE = REPO / "docs" / "examples" / "closure" / "awake_while_waiting.evidence.json"


@pytest.fixture
def failing_skills(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    """`holon skills list` raises whatever the test puts in the list."""
    import holon.cli.skills_cmd as skills_cmd

    raised: list[BaseException] = []

    def boom(args: argparse.Namespace) -> int:
        raise raised[0]

    monkeypatch.setattr(skills_cmd, "main", boom)
    return raised


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    places = {"dir": tmp_path / "logs", "cache": tmp_path / "cache", "tmp": tmp_path / "tmp"}
    places["tmp"].mkdir()
    monkeypatch.setenv("HOLON_LOG_DIR", str(places["dir"]))
    monkeypatch.delenv("RUNNER_TEMP", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(places["cache"]))
    monkeypatch.setattr(tempfile, "tempdir", str(places["tmp"]))
    return places


def test_a_bare_holon_error_is_internal_and_names_its_log(
    failing_skills: list[BaseException], logs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    failing_skills.append(HolonError("an invariant of Holon's own broke"))
    assert cli.main(["skills", "list"]) == 70
    log = logs["dir"] / "holon-error.log"
    assert capsys.readouterr().err == f"holon: internal error: HolonError; traceback in {log}\n"
    assert "an invariant of Holon's own broke" in log.read_text()


@pytest.mark.parametrize("blocked", ["dir", "dir+cache"])
def test_an_internal_error_falls_back_to_a_writable_log(
    blocked: str,
    failing_skills: list[BaseException],
    logs: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A file where a log directory should be: that place cannot hold the log.
    logs["dir"].write_text("not a directory")
    if "cache" in blocked:
        logs["cache"].write_text("not a directory")
    failing_skills.append(RuntimeError("unexpected"))
    assert cli.main(["skills", "list"]) == 70
    err = capsys.readouterr().err
    want = (
        logs["cache"] / "holon" / "holon-error.log"
        if blocked == "dir"
        else logs["tmp"] / f"holon-error-{os.getuid()}.log"
    )
    assert err == f"holon: internal error: RuntimeError; traceback in {want}\n"
    assert "RuntimeError: unexpected" in want.read_text()


def test_a_planted_link_does_not_redirect_the_log(
    failing_skills: list[BaseException], logs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    victim = logs["tmp"] / "victim"
    victim.write_text("untouched\n")
    logs["dir"].mkdir()
    (logs["dir"] / "holon-error.log").symlink_to(victim)
    failing_skills.append(RuntimeError("unexpected"))
    assert cli.main(["skills", "list"]) == 70
    assert victim.read_text() == "untouched\n"
    assert "traceback in " + str(logs["cache"]) in capsys.readouterr().err


def test_no_writable_log_prints_the_traceback(
    failing_skills: list[BaseException],
    logs: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (logs["tmp"] / "file").write_text("a file, not a directory")
    monkeypatch.setattr(errorlog, "log_paths", lambda: [logs["tmp"] / "file" / "holon-error.log"])
    failing_skills.append(RuntimeError("unexpected"))
    assert cli.main(["skills", "list"]) == 70
    err = capsys.readouterr().err
    assert "RuntimeError: unexpected" in err
    assert err.endswith("holon: internal error: RuntimeError; no log writable\n")


@pytest.mark.parametrize(
    "error",
    [GitError("git diff failed: fatal: bad object"), SnapshotError("cannot copy the workspace")],
)
def test_operational_failures_exit_74_with_one_line(
    error: HolonError,
    failing_skills: list[BaseException],
    logs: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    failing_skills.append(error)
    assert cli.main(["skills", "list"]) == 74
    assert capsys.readouterr().err == f"holon: error: {error}\n"
    assert not logs["dir"].exists()


def _holon(*argv: str) -> list[str]:
    return [sys.executable, "-c", "from holon.cli.main import entry; entry()", *argv]


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["skills", "list"], id="skills-list"),
        pytest.param(["closure", "derive", str(EVIDENCE)], id="closure-derive"),
        pytest.param(["serve", "status", "--state-dir", "STATE"], id="serve-status"),
    ],
)
def test_a_closed_pipe_ends_the_command_quietly(argv: list[str], tmp_path: Path) -> None:
    state = tmp_path / "state"
    example = REPO / "examples" / "serve"
    replay = ["--replay", str(example / "replay.ndjson"), "--facts", str(example / "facts.json")]
    assert cli.main(["serve", "--state-dir", str(state), *replay, "--dry-run", "--once"]) == 2
    argv = [str(state) if a == "STATE" else a for a in argv]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes a byte (`| true`)
    try:
        proc = subprocess.run(_holon(*argv), stdout=write, stderr=subprocess.PIPE, check=False)
    finally:
        os.close(write)
    assert proc.stderr == b""
    assert proc.returncode == 141


_PLUGINS_PROBE = """
import os, sys
from holon.cli.main import _plugins_unlooked
_plugins_unlooked()
from pydantic import BaseModel
class M(BaseModel):
    x: int
assert M(x=1).x == 1
from pydantic.plugin import _loader
loaded = "importlib.metadata" in sys.modules
print("metadata" if loaded else "no-metadata", list(_loader.get_plugins()))
print(isinstance(_loader._plugins, (dict, type(None))))
"""


@pytest.mark.parametrize(
    ("disabled", "metadata"),
    [("__all__", "no-metadata"), ("true", "no-metadata"), ("", "metadata")],
)
def test_disabled_pydantic_plugins_are_not_looked_for(disabled: str, metadata: str) -> None:
    """The process entry keeps pydantic from importing `importlib.metadata` to look for plugins
    it would not use; with plugins enabled, the real loader looks, as before."""
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": disabled}
    proc = subprocess.run(
        [sys.executable, "-c", _PLUGINS_PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [metadata, "[]", "True"]


_QUICK_PROBE = """
import argparse, atexit, os, sys, threading, time, types
from holon.cli import main as cli

class Teardown:
    def __del__(self, write=os.write):
        write(2, b"torn down\\n")

command = types.ModuleType("probe_cmd")
command.QUICK_EXIT = {quick}
command.configure = lambda parser: None
command.kept = Teardown()  # freed only by the interpreter's teardown

def run(args):
    atexit.register(lambda: print("atexit ran"))
    if {thread}:
        threading.Thread(target=lambda: (time.sleep(0.2), print("thread done"))).start()
    sys.stdout.write("output without newline")
    return 3

command.main = run
sys.modules["probe_cmd"] = command
cli.COMMANDS["probe-cmd"] = ("probe_cmd", "a command of the test")
sys.argv = ["holon", "probe-cmd"]
cli.entry()
"""


@pytest.mark.parametrize(
    ("quick", "thread", "torn_down"),
    [(True, False, False), (False, False, True), (True, True, True)],
    ids=["quick", "ordinary", "quick-but-a-thread-runs"],
)
def test_a_quick_exit_skips_only_the_teardown(quick: bool, thread: bool, torn_down: bool) -> None:
    """A command with `QUICK_EXIT` ends without the interpreter's teardown, and with everything
    else an exit does: its code, its output flushed, the atexit functions run; a thread still
    running (not a daemon) gets the ordinary exit, which waits for it."""
    script = _QUICK_PROBE.replace("{quick}", str(quick)).replace("{thread}", str(thread))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 3, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("output without newline")
    assert "atexit ran" in proc.stdout
    assert ("thread done" in proc.stdout) is thread
    assert ("torn down" in proc.stderr) is torn_down


def test_holon_run_exits_quickly() -> None:
    import holon.cli.run_cmd

    assert holon.cli.run_cmd.QUICK_EXIT is True


def test_a_named_command_gets_its_parser_alone_and_help_lists_them_all(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`holon run ...` builds the run command's parser only (the others cost its start ~2 ms);
    `holon --help`, and a name that is no command, still see every command."""

    def commands(parser: argparse.ArgumentParser) -> set[str]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return set(sub.choices)

    assert commands(cli.build_parser("run")) == {"run"}
    assert commands(cli.build_parser(None)) == set(cli.COMMANDS)
    assert cli.main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert all(name in shown for name in cli.COMMANDS)
    assert cli.main(["nosuch"]) == cli.EXIT_USAGE
    assert "invalid choice: 'nosuch'" in capsys.readouterr().err
    assert cli.main(["run", "--spec", "x"]) == cli.EXIT_USAGE  # its own parser's refusal
    assert "--output" in capsys.readouterr().err
