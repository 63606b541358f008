"""Hostile corpus: a serve state directory restored from elsewhere, or one that is none.

A record whose `updated_at` is `0001-01-01T00:00:00+23:59` (or `9999-12-31T23:59:59-23:59`)
cannot be converted to UTC: `holon serve`, `serve status` (text and `--json`) and `serve pause`
ended in exit 70 (OverflowError). Such a state is now a corrupt state: one line, exit 64, the file
left untouched. And `holon serve status --state-dir /proc` printed a status of nothing: a directory
that holds other files but no state.json, state.lock or inbox.ndjson is refused.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from holon.cli import main as cli

REPO = Path(__file__).resolve().parents[2]
SERVE_EXAMPLE = REPO / "examples" / "serve"
FACTS = str(SERVE_EXAMPLE / "facts.json")
HOSTILE_TIMES = ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "1969-12-31T23:59:59Z"]
COMMANDS = {
    "status": ["serve", "status"],
    "status-json": ["serve", "status", "--json"],
    "pause": ["serve", "pause", "--reason", "r"],
    "resume": ["serve", "resume"],
    "serve": ["serve", "--once", "--dry-run", "--facts", FACTS],
}


@pytest.fixture
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "logs"
    monkeypatch.setenv("HOLON_LOG_DIR", str(path))
    return path


def _state(directory: Path, updated_at: str) -> bytes:
    directory.mkdir()
    record = {"updated_at": updated_at, "writer": "cli", "data": {"paused": True, "by": "x"}}
    raw = json.dumps({"records": {"pause:serve": record}}).encode()
    (directory / "state.json").write_bytes(raw)
    return raw


@pytest.mark.parametrize("when", HOSTILE_TIMES)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_record_time_out_of_range_is_a_corrupt_state(
    command: str,
    when: str,
    tmp_path: Path,
    log_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = tmp_path / "state"
    raw = _state(state, when)
    code = cli.main([*COMMANDS[command], "--state-dir", str(state)])
    err = capsys.readouterr().err
    assert code == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"holon: error: state file {state / 'state.json'} is unusable ("), err
    assert "records.pause:serve.updated_at: timestamp out of range (1970 to 3000)" in err
    assert "left untouched" in err
    assert (state / "state.json").read_bytes() == raw
    assert not log_dir.exists()


def test_every_time_in_a_real_state_made_hostile_never_breaks_a_command(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A state with kept events, waits, intents and closures (a replay while paused), each of
    its times in turn replaced by a hostile one: every command exits as documented (0 to 3, or
    64 with one line), never 70."""
    base = tmp_path / "base"
    assert cli.main(["serve", "pause", "--state-dir", str(base)]) == 0
    replay = ["--replay", str(SERVE_EXAMPLE / "replay.ndjson")]
    # Paused with kept events: waiting on the operator's resume (exit 2).
    assert cli.main(["serve", "--state-dir", str(base), *replay, *COMMANDS["serve"][1:]]) == 2
    capsys.readouterr()
    text = (base / "state.json").read_text()
    times = sorted(set(re.findall(r'"(\d{4}-\d\d-\d\dT[^"]*)"', text)))
    assert len(times) > 20
    for number, original in enumerate(times):
        hostile = HOSTILE_TIMES[number % 2]
        copy = tmp_path / f"copy-{number}"
        shutil.copytree(base, copy)
        (copy / "state.json").write_text(text.replace(f'"{original}"', f'"{hostile}"'))
        for name in ("status-json", "resume", "serve"):
            code = cli.main([*COMMANDS[name], "--state-dir", str(copy)])
            err = capsys.readouterr().err
            where = f"{original} -> {hostile}, {name}"
            assert code in (0, 1, 2, 3, 64), f"{where}: {err}"
            assert code != 64 or err.count("\n") == 1, f"{where}: {err}"
        shutil.rmtree(copy)
    assert not log_dir.exists()


@pytest.mark.parametrize("directory", ["/proc", "/etc"])
def test_status_of_a_directory_that_is_no_state_is_refused(
    directory: str, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["serve", "status", "--state-dir", directory])
    captured = capsys.readouterr()
    assert code == 64, captured.err
    assert captured.err == (
        f"holon: error: no serve state at {directory}: it holds other files but no "
        "state.json, state.lock or inbox.ndjson\n"
    )
    assert captured.out == ""
    assert not log_dir.exists()


@pytest.mark.parametrize("holds", ["nothing", "state.lock"])
def test_status_of_a_new_state_dir_says_nothing_is_recorded(
    holds: str, tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    if holds != "nothing":
        (state / holds).write_text("")
    assert cli.main(["serve", "status", "--state-dir", str(state)]) == 0
    out = capsys.readouterr().out
    assert "serve running: no" in out
    assert "last event: none" in out
