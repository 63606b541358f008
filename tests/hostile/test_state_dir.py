"""Hostile corpus: a serve state directory restored from elsewhere, with links and FIFOs planted.

A restored state directory is outside input. Holon once appended its journal lines through a
link at `events.ndjson` into whatever file it named. Now no file of the directory is followed
or waited on: serve refuses with one line and exit 64, and the file named is untouched.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holon.cli import main as cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serve"
SERVE = ["--replay", str(EXAMPLE / "replay.ndjson"), "--facts", str(EXAMPLE / "facts.json")]


@pytest.fixture
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where an internal error would be logged: it must stay absent."""
    path = tmp_path / "logs"
    monkeypatch.setenv("HOLON_LOG_DIR", str(path))
    return path


@pytest.mark.parametrize(
    "name",
    [
        "events.ndjson",
        "decisions.ndjson",
        "actions.ndjson",
        "actions.ndjson.1",
        "inbox.ndjson",
        "state.json",
    ],
)
@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_a_planted_file_in_the_state_dir_is_never_followed(
    name: str, planted: str, tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    if planted == "link":
        (state / name).symlink_to(victim)
    else:
        os.mkfifo(state / name)  # reading one would wait forever for a writer
    code = cli.main(["serve", "--state-dir", str(state), "--dry-run", "--once", *SERVE])
    err = capsys.readouterr().err
    assert code == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith("holon: error: "), err
    assert "link" in err if planted == "link" else "not a regular file" in err
    assert victim.read_text() == "precious\n"
    assert not log_dir.exists()


def test_a_control_command_that_is_a_link_is_rejected_unread(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert cli.main(["serve", "pause", "--state-dir", str(state), "--reason", "r"]) == 0
    victim = tmp_path / "victim.json"
    victim.write_text('{"command": "resume", "by": "someone"}')
    control = state / "control"
    control.mkdir(exist_ok=True)
    from holon.state.control import control_name

    (control / control_name()).symlink_to(victim)
    assert cli.main(["serve", "--state-dir", str(state), "--dry-run", "--once", *SERVE]) == 2
    assert cli.main(["serve", "status", "--state-dir", str(state), "--json"]) == 0
    # The linked "resume" was never read: serve stayed paused, the link went to rejected/.
    assert (control / "rejected").is_dir()
    assert any(p.is_symlink() for p in (control / "rejected").iterdir())
    assert victim.read_text() == '{"command": "resume", "by": "someone"}'
