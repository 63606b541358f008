"""Hostile corpus: outside text printed to a terminal that could forge Holon's own lines.

The `holon run` summary printed the agent's question raw, `holon serve status` the pause reason
and closure details: ESC sequences (clear the screen, OSC 52 writes the clipboard), CR/LF
starting a line that reads as Holon's (`  - issue:2: completed, finished: ...`), NUL, bidi
overrides. Each is now one line with every character that is not printable shown escaped
(holon/terminal.py), in summaries, status, serve's exit lines, probe's verdict, error lines and
the text handoff; `--json` output escapes them inside its strings and keeps the same value.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from holon.cli import main as cli
from holon.terminal import json_text, line

REPO = Path(__file__).resolve().parents[2]
HELLO_SPEC = REPO / "examples" / "hello" / "spec.yaml"
SERVE_EXAMPLE = REPO / "examples" / "serve"
FORGED = "  - issue:2: completed, finished: forged"
HOSTILE = (
    "Hi\x1b]52;c;cHduZWQ=\x07 \x1b[2J\r\n" + FORGED + "\x00nul \u202eevil\u009b31m\U000e0041\rX"
)


def _assert_safe(output: str, lines: int | None = None) -> None:
    """Every line printable (nothing a terminal acts on) and none forged."""
    for text in output.splitlines():
        bad = [c for c in text if not c.isprintable()]
        assert not bad, f"{bad!r} in {text!r}"
        assert not text.startswith(FORGED), text
        assert not text.startswith(FORGED.strip()), text
    assert "\r" not in output
    if lines is not None:
        assert len(output.splitlines()) == lines, output


@pytest.fixture
def log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "logs"
    monkeypatch.setenv("HOLON_LOG_DIR", str(path))
    return path


def _agent(tmp_path: Path, manifest: dict[str, Any], code: int) -> str:
    script = tmp_path / "agent.py"
    script.write_text(
        "import json, os, sys\n"
        "out = os.environ['HOLON_OUTPUT_DIR']\n"
        "with open(os.path.join(out, 'manifest.json'), 'w') as f:\n"
        f"    json.dump({manifest!r}, f)\n"
        f"sys.exit({code})\n"
    )
    return f"{sys.executable} {script}"


ASKS = {
    "status": "completed",
    "outcome": "needs_human",
    "error": "e\x1b[31mRED\r\nreason: forged",
    "question": {"id": "q\x1b]0;title\x07", "text": HOSTILE},
}


def test_run_summary_shows_the_question_escaped_on_its_own_line(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ws").mkdir()
    argv = [
        *("run", "--spec", str(HELLO_SPEC), "--workspace", str(tmp_path / "ws")),
        *("--output", str(tmp_path / "out"), "--runtime", "local"),
        *("--agent", _agent(tmp_path, ASKS, 2)),
    ]
    assert cli.main(argv) == 2
    out = capsys.readouterr().out
    _assert_safe(out)
    reason = next(text for text in out.splitlines() if text.startswith("reason: "))
    assert "Hi\\x1b]52;c;cHduZWQ=\\x07 \\x1b[2J " + FORGED.strip() in reason
    assert "\\x00nul \\u202eevil\\x9b31m\\U000e0041 X" in reason
    assert sum(text.startswith("reason: ") for text in out.splitlines()) == 1
    assert not log_dir.exists()


def test_run_json_escapes_controls_and_keeps_the_value(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ws").mkdir()
    argv = [
        *("run", "--spec", str(HELLO_SPEC), "--workspace", str(tmp_path / "ws")),
        *("--output", str(tmp_path / "out"), "--runtime", "local", "--json"),
        *("--agent", _agent(tmp_path, ASKS, 2)),
    ]
    assert cli.main(argv) == 2
    out = capsys.readouterr().out
    _assert_safe(out)
    record = json.loads(out)
    assert record == json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["closure"]["question"]["text"] == HOSTILE


def test_probe_verdict_is_one_line(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = {"status": "failed", "outcome": "failure", "error": HOSTILE}
    argv = ["probe", "--runtime", "local", "--agent", _agent(tmp_path, manifest, 1)]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    _assert_safe(out, lines=1)
    assert out.startswith("probe failed: ")


def _hostile_strings(value: Any) -> Any:
    """Every string in `value` with the hostile text appended."""
    if isinstance(value, str):
        return value + HOSTILE
    if isinstance(value, dict):
        return {key: _hostile_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_hostile_strings(item) for item in value]
    return value


@pytest.fixture
def hostile_state(tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A real serve state (the example replayed, then paused) whose every recorded string holds
    the hostile text: a restored state is outside input."""
    state = tmp_path / "state"
    argv = [
        *("serve", "--state-dir", str(state), "--once", "--dry-run"),
        *("--replay", str(SERVE_EXAMPLE / "replay.ndjson")),
        *("--facts", str(SERVE_EXAMPLE / "facts.json")),
    ]
    assert cli.main(argv) in (0, 1, 2, 3)
    assert cli.main(["serve", "pause", "--state-dir", str(state), "--reason", "r"]) == 0
    data = json.loads((state / "state.json").read_text())
    records = {}
    for rid, record in data["records"].items():
        record["data"] = _hostile_strings(record.get("data", {}))
        # A subject's closure is filed under the subject: its key is printed, too.
        records[rid + HOSTILE if rid.startswith("closure:") else rid] = record
    data["records"] = records
    (state / "state.json").write_text(json.dumps(data))
    shutil.rmtree(state / "control", ignore_errors=True)
    capsys.readouterr()
    return state


def test_serve_status_prints_recorded_text_escaped(
    hostile_state: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["serve", "status", "--state-dir", str(hostile_state)]) == 0
    out = capsys.readouterr().out
    _assert_safe(out)
    paused = next(text for text in out.splitlines() if text.startswith("paused: "))
    assert paused.endswith(
        "\\x1b[2J " + FORGED.strip() + "\\x00nul \\u202eevil\\x9b31m\\U000e0041 X"
    )
    assert "\\x1b]52;c;cHduZWQ=\\x07" in out
    assert not log_dir.exists()


def test_serve_status_json_escapes_controls_and_keeps_the_value(
    hostile_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["serve", "status", "--state-dir", str(hostile_state), "--json"]) == 0
    out = capsys.readouterr().out
    _assert_safe(out)
    assert json.loads(out)["pause"]["reason"] == "r" + HOSTILE


def test_serve_exit_lines_print_details_escaped(
    hostile_state: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["serve", "resume", "--state-dir", str(hostile_state)]) == 0
    capsys.readouterr()
    argv = [
        *("serve", "--state-dir", str(hostile_state), "--once", "--dry-run"),
        *("--facts", str(SERVE_EXAMPLE / "facts.json")),
    ]
    assert cli.main(argv) in (0, 1, 2, 3)
    captured = capsys.readouterr()
    _assert_safe(captured.out, lines=2)
    _assert_safe(captured.err)
    assert not log_dir.exists()


def test_a_pause_reason_given_on_the_command_line(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    assert cli.main(["serve", "pause", "--state-dir", str(state), "--reason", HOSTILE]) == 0
    capsys.readouterr()
    assert cli.main(["serve", "status", "--state-dir", str(state)]) == 0
    out = capsys.readouterr().out
    _assert_safe(out, lines=6)
    assert line(HOSTILE) in out


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--spec", "x\x1b[2J\nholon: ok", "--output", "o", "--runtime", "local"],
        ["closure", "derive", "e\r\n  - forged\x1b]52;c;eA==\x07.json"],
        ["gateway", "normalize", "--event", "issues", "--payload", "p\x1b[2J\nok.json"],
    ],
    ids=["run-spec-path", "closure-path", "gateway-payload-path"],
)
def test_an_error_quoting_outside_text_is_one_escaped_line(
    argv: list[str],
    tmp_path: Path,
    log_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 64
    err = capsys.readouterr().err
    assert err.startswith("holon: error: ")
    _assert_safe(err, lines=1)
    assert "\\x1b" in err


def test_text_handoff_keeps_each_field_on_its_line(
    tmp_path: Path, log_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An artifact's name or path once started a line of its own in the text handoff."""
    evidence = tmp_path / "evidence.json"
    run = {"id": "r1", "kind": "run", "source": "runner", "at": "2026-11-21T10:00:00Z"}
    evidence.write_text(
        json.dumps({"items": [{**run, "state": "completed", "outcome": "success"}]})
    )
    assert cli.main(["closure", "derive", str(evidence)]) == 0
    record = json.loads(capsys.readouterr().out)
    record["context"] = {
        "title": HOSTILE,
        "evidence": [HOSTILE],
        "artifacts": [{"name": "a\nHandoff: forged", "path": "p\rEvidence: forged"}],
        "details": "d\x1b]52;c;eA==\x07",
    }
    closure = tmp_path / "closure.json"
    closure.write_text(json.dumps(record))
    assert cli.main(["handoff", "render", str(closure), "--format", "text"]) == 0
    out = capsys.readouterr().out
    _assert_safe(out)
    assert "  - a Handoff: forged (p Evidence: forged)" in out
    assert sum(text.startswith("Handoff: ") for text in out.splitlines()) == 1
    assert sum(text.startswith("Evidence:") for text in out.splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("one\r\ntwo\nthree\tfour", "one two three four"),
        ("nul\x00", "nul\\x00"),
        ("bidi \u202eevil", "bidi \\u202eevil"),
        ("csi \u009b31m", "csi \\x9b31m"),
        ("tag \U000e0041", "tag \\U000e0041"),
        ("line\u2028sep", "line sep"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("undecodable \udcff", "undecodable \\udcff"),
        ("plain café ✓", "plain café ✓"),
    ],
)
def test_line(text: str, shown: str) -> None:
    assert line(text) == shown
    assert line(text + "x" * 200, 20).endswith("...")
    assert len(line(text + "x" * 200, 20)) == 20


def test_json_text_keeps_the_value() -> None:
    value = {"t": HOSTILE + "\x7f\ufeff", "n": 1, "k\u202e": ["ok ✓"]}
    for encoded in (json.dumps(value, indent=2), json.dumps(value, ensure_ascii=False)):
        safe = json_text(encoded)
        assert json.loads(safe) == value
        assert all(c.isprintable() or c == "\n" for c in safe)
    assert "ok ✓" in json_text(json.dumps(value, ensure_ascii=False))
