"""`holon serve` and its operator commands as users run them, including bad input."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from tests.serve.conftest import EXAMPLE, holon_argv, start_serve

REPLAY = EXAMPLE / "replay.ndjson"
FACTS = ["--facts", str(EXAMPLE / "facts.json")]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_status_json_and_human(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(tmp_path / "s")
    main(["serve", "--state-dir", state, "--replay", str(REPLAY), "--dry-run", "--once", *FACTS])
    capsys.readouterr()
    assert main(["serve", "status", "--state-dir", state, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["running"] is False
    assert status["paused"] is False
    assert status["last_event"]["type"] == "timer.tick"
    assert status["waits"] == [
        {
            "subject": "issue:1",
            "on": "operator",
            "detail": "stopped by Codertocat; any later /holon command restarts",
        }
    ]
    assert status["closures"]["issue:1"]["lifecycle_outcome"] == "userinterlude"
    assert main(["serve", "status", "--state-dir", state]) == 0
    human = capsys.readouterr().out
    assert "issue:1: operator (stopped by Codertocat" in human
    assert "issue:1: waiting/awaiting_operator_input, userinterlude" in human


def test_pause_keeps_events_and_resume_decides_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s")
    assert main(["serve", "pause", "--state-dir", state, "--reason", "maintenance"]) == 0
    code = main(
        ["serve", "--state-dir", state, "--replay", str(REPLAY), "--dry-run", "--once", *FACTS]
    )
    # Nothing decided while paused is nothing done: the operator's resume is what it waits on.
    assert code == 2
    assert "exit 2: paused by " in capsys.readouterr().out
    decisions = _lines(Path(state) / "decisions.ndjson")
    assert {d["outcome"] for d in decisions} == {"paused", "duplicate"}
    assert _lines(Path(state) / "actions.ndjson") == []  # nothing performed
    capsys.readouterr()
    main(["serve", "status", "--state-dir", state, "--json"])
    status = json.loads(capsys.readouterr().out)
    assert status["paused"] is True
    assert status["pause"]["reason"] == "maintenance"
    assert len(status["kept_while_paused"]) == 8
    assert main(["serve", "resume", "--state-dir", state]) == 0
    # The next start decides the kept events (none are older than the policy's 24h).
    assert main(["serve", "--state-dir", state, "--dry-run", "--once", *FACTS]) == 2
    outcomes = [d["outcome"] for d in _lines(Path(state) / "decisions.ndjson")]
    assert outcomes.count("decided") == 7
    assert len(_lines(Path(state) / "actions.ndjson")) == 6


def test_pause_reaches_a_running_serve(tmp_path: Path) -> None:
    state = tmp_path / "s"
    proc = start_serve("--state-dir", str(state), "--tick-interval", "1h", "--dry-run")
    try:
        deadline = time.monotonic() + 20
        while not (state / "state.json").exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        done = subprocess.run(
            holon_argv("serve", "pause", "--state-dir", str(state), "--reason", "deploy"),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert "applied by the running serve" in done.stdout
        status = subprocess.run(
            holon_argv("serve", "status", "--state-dir", str(state), "--json"),
            capture_output=True,
            text=True,
            timeout=30,
        )
        data = json.loads(status.stdout)
        assert data["running"] is True
        assert data["paused"] is True
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    assert proc.returncode == 0
    # Graceful SIGTERM: the lock is released and the state saved.
    assert main(["serve", "status", "--state-dir", str(state)]) == 0


def test_malformed_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\nrules:\n  - name: x\n    do: launch\n")
    code = main(["serve", "--state-dir", str(tmp_path / "s"), "--policy", str(policy), "--once"])
    assert code == 64
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"holon: error: {policy} line 4: rules.0.do:")
    assert not (tmp_path / "s").exists()


def test_locked_state_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from holon.state.store import StateStore

    holder = StateStore(tmp_path / "s")
    holder.acquire()
    try:
        assert main(["serve", "--state-dir", str(tmp_path / "s"), "--once", "--dry-run"]) == 64
        assert "locked" in capsys.readouterr().err
    finally:
        holder.release()


def test_corrupt_state_is_kept_and_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s"
    state.mkdir()
    (state / "state.json").write_text('{"version": 1, "records": {')
    assert main(["serve", "--state-dir", str(state), "--once", "--dry-run"]) == 64
    err = capsys.readouterr().err
    assert "state.json" in err
    assert "state.json.prev" in err or "move it aside" in err
    assert (state / "state.json").read_text() == '{"version": 1, "records": {'


def test_broken_replay_line_is_skipped_and_journaled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = REPLAY.read_text().splitlines()
    broken = tmp_path / "broken.ndjson"
    broken.write_text("\n".join([lines[0], "{not json", '{"event": "issues"}', *lines[2:]]) + "\n")
    state = tmp_path / "s"
    assert (
        main(
            [
                "serve",
                "--state-dir",
                str(state),
                "--replay",
                str(broken),
                "--dry-run",
                "--once",
                *FACTS,
            ]
        )
        == 2
    )
    errors = [e for e in _lines(state / "events.ndjson") if "error" in e]
    assert [e["id"] for e in errors] == ["error:broken.ndjson:2", "error:broken.ndjson:3"]
    assert "broken.ndjson line 2: invalid JSON" in errors[0]["error"]
    assert len(_lines(state / "decisions.ndjson")) == 8


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--listen", "127.0.0.1:0"], "--listen needs --secret-env"),
        (["--listen", "nowhere"], "expected HOST:PORT"),
        (["--replay", "/no/such/file.ndjson"], "replay path not found"),
        # A duration error names the flag it came from, not the run command's --timeout.
        (["--tick-interval", "soon"], "--tick-interval: invalid duration 'soon'"),
        (["--tick-interval", "0"], "--tick-interval: invalid duration '0'"),
        (["--tick-interval", ""], "--tick-interval: invalid duration ''"),
    ],
)
def test_bad_serve_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["serve", "--state-dir", str(tmp_path / "s"), "--once", *argv]) == 64
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err
    assert "--timeout" not in err


def test_status_of_missing_state_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "status", "--state-dir", str(tmp_path / "nope")]) == 64
    assert "no serve state at" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "code", "why"),
    [
        (["--dry-run", "--once"], 2, "exit 2: waiting on the operator: issue:1 (userinterlude: "),
        # Without --dry-run nothing can reach GitHub or an agent here: failed, and it says why.
        (["--once"], 1, "exit 1: failed: "),
        # Out of input by itself (a replay, no receiver, no ticks): the same code as --once.
        ([], 1, "no agent configured for skill runs"),
    ],
)
def test_serve_says_what_it_did_and_why_it_exits(
    extra: list[str], code: int, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "s")
    assert main(["serve", "--state-dir", state, "--replay", str(REPLAY), *FACTS, *extra]) == code
    did, exit_line = capsys.readouterr().out.splitlines()
    assert did.startswith("serve: 9 events handled (1 duplicate, 0 broken, 0 failed inside Holon)")
    assert exit_line.startswith(f"exit {code}: ")
    assert why in exit_line
