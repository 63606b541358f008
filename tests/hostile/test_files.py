"""Hostile corpus: the files a command names besides JSON documents (a spec, a policy, a prompt,
a replay path) that once were read whole.

`holon run --spec /dev/zero` (and `--system-prompt`, `--user-prompt`, `holon probe --spec`,
`holon serve --policy`) read the file into memory with no bound and died of memory exhaustion
(24 GB before the audit stopped it); `holon serve --replay /dev/zero` said "replay path not found".
Each now stops at a documented limit while reading, or names what the path is, in one line and
exit 64; a directory or a FIFO with no writer given as such a file ends the same way (the FIFO
reads as empty), never hangs. Every case runs in a child process whose address space is capped, so a
regression fails the test instead of exhausting the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HELLO_SPEC = REPO / "examples" / "hello" / "spec.yaml"
MiB = 1024 * 1024
MEMORY_CAP = 1024 * MiB  # address space of the child: far under what a whole /dev/zero needs


# The child caps its own address space before Holon is imported (no preexec_fn in a threaded
# test process).
CAPPED_ENTRY = (
    "import resource\n"
    f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CAP}, {MEMORY_CAP}))\n"
    "from holon.cli.main import entry\n"
    "entry()\n"
)


def _holon(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOLON_LOG_DIR": str(tmp_path / "logs")}
    return subprocess.run(
        [sys.executable, "-c", CAPPED_ENTRY, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


def _assert_one_line_64(proc: subprocess.CompletedProcess[str], tmp_path: Path, text: str) -> None:
    assert proc.returncode == 64, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("holon: error: "), proc.stderr
    assert text in proc.stderr, proc.stderr
    assert not (tmp_path / "logs").exists()


def _run(*more: str) -> list[str]:
    return [
        *("run", "--workspace", "ws", "--output", "out", "--runtime", "local"),
        *("--agent", "true", *more),
    ]


# Each row: argv with FILE where the hostile path goes, and the line for /dev/zero.
COMMANDS = {
    "run-spec": (_run("--spec", "FILE"), "spec /dev/zero: over the 1 MiB limit"),
    "run-system-prompt": (
        _run("--spec", str(HELLO_SPEC), "--system-prompt", "FILE"),
        "--system-prompt: prompt /dev/zero: over the 4 MiB limit",
    ),
    "run-user-prompt": (
        _run("--spec", str(HELLO_SPEC), "--user-prompt", "FILE"),
        "--user-prompt: prompt /dev/zero: over the 4 MiB limit",
    ),
    "probe-spec": (
        ["probe", "--spec", "FILE", "--runtime", "local", "--agent", "true"],
        "spec /dev/zero: over the 1 MiB limit",
    ),
    "serve-policy": (
        ["serve", "--state-dir", "state", "--policy", "FILE", "--once", "--dry-run"],
        "policy /dev/zero: over the 1 MiB limit",
    ),
}


@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_dev_zero_stops_at_the_limit(case: str, tmp_path: Path) -> None:
    argv, line = COMMANDS[case]
    (tmp_path / "ws").mkdir()
    proc = _holon(["/dev/zero" if a == "FILE" else a for a in argv], tmp_path)
    _assert_one_line_64(proc, tmp_path, line)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("case", sorted(COMMANDS))
def test_a_directory_as_the_file_is_named(case: str, tmp_path: Path) -> None:
    argv, _ = COMMANDS[case]
    (tmp_path / "ws").mkdir()
    (tmp_path / "adir").mkdir()
    proc = _holon(["adir" if a == "FILE" else a for a in argv], tmp_path)
    _assert_one_line_64(proc, tmp_path, "path is a directory, not a file: adir")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["run-spec", "probe-spec", "serve-policy"])
def test_a_fifo_with_no_writer_reads_as_empty_and_never_hangs(case: str, tmp_path: Path) -> None:
    argv, _ = COMMANDS[case]
    (tmp_path / "ws").mkdir()
    os.mkfifo(tmp_path / "fifo")
    proc = _holon(["fifo" if a == "FILE" else a for a in argv], tmp_path)
    _assert_one_line_64(proc, tmp_path, "fifo: expected a mapping")


def test_a_spec_just_over_the_limit_is_refused_and_one_under_is_read(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    spec = HELLO_SPEC.read_text()
    (tmp_path / "over.yaml").write_text(spec + "#" * (MiB - len(spec)) + "\n")
    proc = _holon(_run("--spec", "over.yaml"), tmp_path)
    _assert_one_line_64(proc, tmp_path, "spec over.yaml: over the 1 MiB limit")
    (tmp_path / "under.yaml").write_text(spec + "#" * (MiB - len(spec) - 1) + "\n")
    proc = _holon(_run("--spec", "under.yaml"), tmp_path)
    assert proc.returncode == 1, proc.stderr  # read and run: `true` writes no manifest
    assert (tmp_path / "out" / "run.json").is_file()


@pytest.mark.parametrize(
    ("content", "line"),
    [(b"version: v1\n\xff\xfe", "spec s.yaml: not valid UTF-8 (byte 12)")],
    ids=["spec-not-utf8"],
)
def test_a_spec_that_is_not_utf8_is_one_line(content: bytes, line: str, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "s.yaml").write_bytes(content)
    _assert_one_line_64(_holon(_run("--spec", "s.yaml"), tmp_path), tmp_path, line)


@pytest.mark.parametrize("what", ["char-device", "fifo"])
def test_a_replay_path_that_is_no_file_says_what_it_is(what: str, tmp_path: Path) -> None:
    path = "/dev/zero"
    if what == "fifo":
        os.mkfifo(tmp_path / "fifo")
        path = "fifo"
    argv = ["serve", "--state-dir", "state", "--replay", path, "--once", "--dry-run"]
    proc = _holon(argv, tmp_path)
    _assert_one_line_64(
        proc, tmp_path, f"replay path {path} is neither a regular file nor a directory"
    )
    assert "not found" not in proc.stderr
