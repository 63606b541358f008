"""Hostile corpus: input that once reached exit 70 (an internal error) through the command line.

Exit 70 means a bug in Holon, so no input may reach it: documents nested deeper than Python's stack,
an output or state directory that cannot be one, and a state directory restored from elsewhere
whose lock is a link or a FIFO. Each ends in one line naming the problem and exit 64 (an agent's
manifest: a failed run), writes no internal-error log, and touches nothing outside its place.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from holon.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
HELLO_SPEC = REPO / "examples" / "hello" / "spec.yaml"
DEPTH = 100_000  # far past the interpreter's recursion limit


def _deep_json(key: str | None = None) -> str:
    nested = "[" * DEPTH + "]" * DEPTH
    return nested if key is None else f'{{"{key}": {nested}}}'


def _run_argv(workspace: Path, output: Path, agent: str, *more: str) -> list[str]:
    return [
        *("run", "--spec", str(HELLO_SPEC), "--workspace", str(workspace), "--output", str(output)),
        *("--runtime", "local", "--agent", agent, *more),
    ]


def _entry(*argv: str) -> list[str]:
    """The `holon` command as a separate process."""
    return [sys.executable, "-c", "from holon.cli.main import entry; entry()", *argv]


@pytest.fixture
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where an internal error would be logged: it must stay absent."""
    path = tmp_path / "logs"
    monkeypatch.setenv("HOLON_LOG_DIR", str(path))
    return path


def _one_line_64(code: int, err: str, log_dir: Path, *expected: str) -> None:
    assert code == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith("holon: error: "), err
    for text in expected:
        assert text in err
    assert not log_dir.exists()


@pytest.mark.parametrize(
    ("name", "argv", "content"),
    [
        pytest.param("e.json", ["closure", "derive", "FILE"], _deep_json(), id="closure-derive"),
        pytest.param(
            "e.json", ["closure", "derive", "FILE"], _deep_json("items"), id="closure-deep-items"
        ),
        pytest.param("c.json", ["handoff", "render", "FILE"], _deep_json(), id="handoff-render"),
        pytest.param(
            "p.json",
            ["gateway", "normalize", "--event", "issues", "--payload", "FILE"],
            _deep_json("issue"),
            id="gateway-normalize",
        ),
        pytest.param("s.yaml", ["run", "--spec", "FILE"], "a: " + _deep_json(), id="run-spec"),
        pytest.param(
            "p.yaml",
            ["serve", "--policy", "FILE", "--once", "--dry-run"],
            "rules: " + _deep_json(),
            id="serve-policy",
        ),
        pytest.param(
            "f.json",
            ["serve", "--facts", "FILE", "--once", "--dry-run"],
            _deep_json("permissions"),
            id="serve-facts",
        ),
    ],
)
def test_a_document_nested_past_the_stack_is_bad_input(
    name: str,
    argv: list[str],
    content: str,
    tmp_path: Path,
    log_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = tmp_path / name
    document.write_text(content)
    argv = [str(document) if a == "FILE" else a for a in argv]
    if argv[0] == "run":
        argv += ["--workspace", str(tmp_path), "--output", str(tmp_path / "out")]
        argv += ["--runtime", "local", "--agent", "true"]
    if argv[0] == "serve":
        argv += ["--state-dir", str(tmp_path / "state")]
    code = cli.main(argv)
    err = capsys.readouterr().err
    _one_line_64(code, err, log_dir, "nested too deeply")
    assert not (tmp_path / "out").exists()


def test_an_agent_manifest_nested_past_the_stack_fails_the_run(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import os\n"
        "path = os.path.join(os.environ['HOLON_OUTPUT_DIR'], 'manifest.json')\n"
        f"open(path, 'w').write({_deep_json('status')!r})\n"
    )
    (tmp_path / "ws").mkdir()
    out = tmp_path / "out"
    code = cli.main(_run_argv(tmp_path / "ws", out, f"{sys.executable} {agent}", "--json"))
    assert code == 1, capsys.readouterr().err
    record = json.loads(capsys.readouterr().out)
    assert "nested too deeply" in json.dumps(record)
    assert record["status"] != "interrupted"
    assert not log_dir.exists()


@pytest.mark.parametrize("where", ["under-a-file", "under-dev-null"])
def test_an_output_directory_that_cannot_be_made_is_bad_input(
    where: str, tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "file").write_text("not a directory")
    out = tmp_path / "file" / "out" if where == "under-a-file" else Path("/dev/null/out")
    code = cli.main(_run_argv(tmp_path / "ws", out, "true"))
    _one_line_64(code, capsys.readouterr().err, log_dir, "cannot create output directory")
    assert (tmp_path / "file").read_text() == "not a directory"


@pytest.mark.parametrize("action", ["status", "pause", "resume"])
def test_a_state_dir_that_is_a_file_is_bad_input(
    action: str, tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.write_text("a file")
    code = cli.main(["serve", action, "--state-dir", str(state)])
    _one_line_64(code, capsys.readouterr().err, log_dir, str(state))
    assert state.read_text() == "a file"


@pytest.mark.parametrize("action", ["status", "pause", "resume"])
def test_a_state_dir_name_too_long_to_look_up_is_bad_input(
    action: str, tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / ("x" * 5000)  # stat fails with ENAMETOOLONG, not "no such file"
    code = cli.main(["serve", action, "--state-dir", str(state)])
    _one_line_64(code, capsys.readouterr().err, log_dir, "File name too long")


@pytest.mark.parametrize("target", ["victim-file", "dangling"])
def test_a_restored_lock_that_is_a_link_is_never_followed(
    target: str, tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    victim = tmp_path / "victim"
    if target == "victim-file":
        victim.write_text("precious")
    (state / "state.lock").symlink_to(victim)
    code = cli.main(["serve", "pause", "--state-dir", str(state)])
    _one_line_64(code, capsys.readouterr().err, log_dir, str(state))
    # Following the link would have truncated the victim to a pid, or created it.
    if target == "victim-file":
        assert victim.read_text() == "precious"
    else:
        assert not victim.exists()
        assert not victim.is_symlink()
    assert not (state / "state.json").exists()


def test_a_restored_lock_that_is_a_link_stops_serve(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (state / "state.lock").symlink_to(victim)
    code = cli.main(["serve", "--state-dir", str(state), "--once", "--dry-run"])
    _one_line_64(code, capsys.readouterr().err, log_dir, str(state))
    assert victim.read_text() == "precious"


@pytest.mark.parametrize(("action", "code"), [("status", 0), ("pause", 64)])
def test_a_restored_lock_that_is_a_fifo_never_hangs(action: str, code: int, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    os.mkfifo(state / "state.lock")
    env = {**os.environ, "HOLON_LOG_DIR": str(tmp_path / "logs")}
    proc = subprocess.run(
        _entry("serve", action, "--state-dir", str(state)),
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=30,  # opening a FIFO for reading waits for a writer forever
    )
    assert proc.returncode == code, proc.stderr
    if code == 64:
        assert proc.stderr == f"holon: error: state dir {state}: state.lock is not a regular file\n"
    assert not (tmp_path / "logs").exists()


def test_a_planted_log_link_does_not_redirect_an_internal_error(
    tmp_path: Path,
    log_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import holon.cli.skills_cmd as skills_cmd

    def boom(args: argparse.Namespace) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(skills_cmd, "main", boom)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    victim = tmp_path / "victim"
    victim.write_text("precious")
    log_dir.mkdir()
    (log_dir / "holon-error.log").symlink_to(victim)
    assert cli.main(["skills", "list"]) == 70
    err = capsys.readouterr().err
    fallback = tmp_path / "cache" / "holon" / "holon-error.log"
    assert err == f"holon: internal error: RuntimeError; traceback in {fallback}\n"
    assert "RuntimeError: a bug" in fallback.read_text()
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("form", ["comment", "summary", "text"])
def test_lone_surrogates_in_a_handoff_are_bad_input(form: str, tmp_path: Path) -> None:
    evidence = tmp_path / "evidence.json"
    at = "2026-11-21T10:00:00Z"
    run = {"id": "r1", "kind": "run", "source": "runner", "at": at, "state": "completed"}
    evidence.write_text(json.dumps({"items": [{**run, "outcome": "success"}]}))
    derived = subprocess.run(
        _entry("closure", "derive", str(evidence)), capture_output=True, check=True
    )
    record = json.loads(derived.stdout)
    # JSON may spell code points UTF-8 cannot encode; they used to end the render in exit 70:
    # now the reader refuses them, as it does in every document (holon/jsonio.py).
    record["context"] = {"title": "\ud800 title", "evidence": ["\udcff line"], "details": "\ud800"}
    closure = tmp_path / "closure.json"
    closure.write_text(json.dumps(record))
    env = {**os.environ, "HOLON_LOG_DIR": str(tmp_path / "logs")}
    proc = subprocess.run(
        _entry("handoff", "render", str(closure), "--format", form),
        env=env,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 64, proc.stderr
    assert proc.stderr.count(b"\n") == 1
    assert b"lone surrogate" in proc.stderr
    assert b"Traceback" not in proc.stderr
    assert proc.stdout == b""
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["closure", "derive", "-"], id="closure-derive"),
        pytest.param(["handoff", "render", "-"], id="handoff-render"),
        pytest.param(["gateway", "normalize", "--event", "issues", "--payload", "-"], id="gateway"),
    ],
)
def test_reading_a_closed_standard_input_is_bad_input(argv: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "HOLON_LOG_DIR": str(tmp_path / "logs")}
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", *_entry(*argv)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 64, proc.stderr
    assert proc.stderr == "holon: error: -: standard input is closed\n"
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("where", ["not-loopback", "port-out-of-range", "port-taken"])
def test_a_listen_address_that_cannot_be_used_is_bad_input(
    where: str,
    tmp_path: Path,
    log_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOLON_TEST_SECRET", "s3cr3t-value")
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = {
            "not-loopback": "8.8.8.8:8080",
            "port-out-of-range": "127.0.0.1:99999",
            "port-taken": f"127.0.0.1:{taken.getsockname()[1]}",
        }[where]
        code = cli.main(
            [
                *("serve", "--state-dir", str(tmp_path / "state"), "--listen", address),
                *("--secret-env", "HOLON_TEST_SECRET", "--once", "--dry-run"),
            ]
        )
    finally:
        taken.close()
    err = capsys.readouterr().err
    _one_line_64(code, err, log_dir, f"--listen {address}")
    assert "s3cr3t-value" not in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(
            ["run", "--image", "IMG", "--timeout", "99999999999h"],
            "--timeout: invalid duration '99999999999h': at most 365d",
            id="run-timeout-docker",
        ),
        pytest.param(
            ["run", "--runtime", "local", "--agent", "true", "--timeout", "366d"],
            "--timeout: invalid duration '366d': at most 365d",
            id="run-timeout-local",
        ),
        pytest.param(
            ["probe", "--runtime", "local", "--agent", "true", "--timeout", "9" * 400],
            "--timeout: invalid duration '" + "9" * 37 + "...': at most 365d",
            id="probe-timeout-400-digits",
        ),
        pytest.param(
            ["serve", "--tick-interval", "999999999999999h", "--once", "--dry-run"],
            "--tick-interval: invalid duration '999999999999999h': at most 365d",
            id="serve-tick-interval",
        ),
        pytest.param(
            ["run", "--runtime", "local", "--agent", "true", "--log-limit", "9" * 400],
            "--log-limit: invalid size '9999999999999999999999999999999999999999': at most",
            id="run-log-limit-400-digits",
        ),
        pytest.param(
            ["run", "--image", "IMG", "--memory", "99999999999g"],
            "--memory: invalid size '99999999999g': at most 1048576g",
            id="run-memory",
        ),
        pytest.param(
            [
                *("serve", "--listen", "127.0.0.1:" + "9" * 5000),
                *("--secret-env", "HOLON_TEST_SECRET", "--once", "--dry-run"),
            ],
            "--listen '127.0.0.1:999",
            id="serve-listen-5000-digit-port",
        ),
    ],
)
def test_a_limit_past_its_range_is_bad_input(
    argv: list[str],
    expected: str,
    tmp_path: Path,
    log_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # never reached
    monkeypatch.setenv("HOLON_TEST_SECRET", "s3cr3t-value")
    (tmp_path / "ws").mkdir()
    if argv[0] == "serve":
        argv = [*argv, "--state-dir", str(tmp_path / "state")]
    else:
        argv = [*argv, "--output", str(tmp_path / "out")]
        argv += ["--spec", str(HELLO_SPEC)] if argv[0] == "run" else []
        argv += ["--workspace", str(tmp_path / "ws")] if argv[0] == "run" else []
    code = cli.main(argv)
    _one_line_64(code, capsys.readouterr().err, log_dir, expected)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "state").exists()
