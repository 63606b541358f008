"""The replay engine: a recorded session played back with its tool calls run for real."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from holon.agent.conversation import ModelTurn
from holon.agent.engines.builtin import BuiltinEngine
from holon.agent.engines.replay import ENV_SESSION, ReplayEngine
from holon.agent.providers.base import ProviderError
from holon.agent.providers.recording import RecordingProvider
from holon.agent.providers.replay import ReplayProvider
from tests.agent_loop.fakes import (
    FakeRecorder,
    ScriptedProvider,
    call,
    finish,
    make_task,
    shell,
    turn,
)
from tests.conftest import git

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class AddTest(unittest.TestCase):\n"
    "    def test_add(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n\n\n"
    'if __name__ == "__main__":\n'
    "    unittest.main()\n"
)


def _line(text: str = "", *calls: dict[str, Any], **extra: Any) -> str:
    body: dict[str, Any] = {
        "text": text,
        "tool_calls": list(calls),
        "stop_reason": "tool_use" if calls else "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 20},
        **extra,
    }
    return json.dumps(body)


def _call(ident: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": ident, "name": name, "arguments": arguments}


def _session(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text(BUGGY)
    (repo / "test_calc.py").write_text(TESTS)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add() with a bug")
    return repo


def test_a_replayed_session_fixes_a_failing_test_for_real(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    test_command = f"{sys.executable} -m unittest -q test_calc"
    session = _session(
        tmp_path / "session.ndjson",
        [
            _line("Run the tests first.", _call("t1", "shell", command=test_command)),
            _line("", _call("t2", "view", path="calc.py")),
            _line(
                "add() subtracts.",
                _call("t3", "edit", path="calc.py", old="return a - b", new="return a + b"),
            ),
            _line("", _call("t4", "shell", command=test_command)),
            _line(
                "Fixed.",
                _call(
                    "t5",
                    "finish",
                    status="success",
                    summary="add() added instead of subtracting; fixed, tests pass.",
                    verification=[2],
                ),
                model="claude-test",
            ),
        ],
    )
    engine = ReplayEngine.from_env({ENV_SESSION: str(session)})
    assert engine.name == "replay"
    assert engine.missing() is None
    recorder = FakeRecorder()
    result = engine.run(make_task(tmp_path, workspace=repo), recorder)
    assert result.stop == "finished", [r["text"] for r in recorder.of_kind("tool_result")]
    assert result.finish is not None
    assert result.finish.verification == [2]
    assert result.turns == 5
    assert result.usage.total == 600
    assert result.model == "claude-test"
    first, second = recorder.commands
    assert first.exit_code == 1
    assert "FAILED" in first.output_tail
    assert second.exit_code == 0
    assert second.command == test_command
    assert "OK" in second.output_tail
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert "+    return a + b" in git(repo, "diff")
    # What the model was shown is in the transcript, in order.
    results = recorder.of_kind("tool_result")
    assert results[1]["text"].startswith("calc.py (lines 1-2)")
    assert results[2]["text"] == "edited calc.py: replaced 1 occurrence (now lines 2-2)"


def test_a_shell_script_test_can_be_fixed_too(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.sh").write_text('echo "helo"\n')
    (ws / "test.sh").write_text('[ "$(sh greet.sh)" = hello ]\n')
    session = _session(
        tmp_path / "s.ndjson",
        [
            _line("", _call("1", "edit", path="greet.sh", old="helo", new="hello")),
            _line("", _call("2", "shell", command="sh test.sh && echo passed")),
            _line("", _call("3", "finish", status="success", summary="typo", verification=[1])),
        ],
    )
    recorder = FakeRecorder()
    result = ReplayEngine.from_env({ENV_SESSION: str(session)}).run(
        make_task(tmp_path, workspace=ws), recorder
    )
    assert result.stop == "finished"
    assert recorder.commands[0].exit_code == 0


def test_a_session_that_runs_out_is_an_error_naming_its_length(tmp_path: Path) -> None:
    session = _session(
        tmp_path / "s.ndjson",
        [
            _line("", _call("1", "shell", command="true")),
            "",
            _line("", _call("2", "view", path=".")),
        ],
    )
    result = ReplayEngine.from_env({ENV_SESSION: str(session)}).run(
        make_task(tmp_path), FakeRecorder()
    )
    assert result.stop == "error"
    assert result.error == "the provider failed: recorded session ended after 2 turns"
    assert result.turns == 2


def test_a_malformed_line_is_an_error_naming_the_line(tmp_path: Path) -> None:
    session = _session(
        tmp_path / "s.ndjson",
        [_line("", _call("1", "shell", command="true")), '{"text": "x", "tool_calls": 5}'],
    )
    result = ReplayEngine.from_env({ENV_SESSION: str(session)}).run(
        make_task(tmp_path), FakeRecorder()
    )
    assert result.stop == "error"
    assert result.error is not None
    assert "recorded session s.ndjson line 2: tool_calls: Input should be a valid array" in (
        result.error
    )
    not_json = _session(tmp_path / "t.ndjson", ["{oops"])
    with pytest.raises(ProviderError, match=r"t\.ndjson line 1"):
        ReplayProvider(not_json).complete("", [], [], max_tokens=1)


def test_a_recorded_call_with_unparsed_arguments_replays_as_such(tmp_path: Path) -> None:
    session = _session(
        tmp_path / "s.ndjson",
        [
            json.dumps(
                {
                    "tool_calls": [
                        {"id": "x", "name": "shell", "arguments": None, "raw_arguments": "{bad"}
                    ],
                    "stop_reason": "tool_use",
                }
            ),
            _line("", _call("2", "finish", status="failure", summary="bad call")),
        ],
    )
    recorder = FakeRecorder()
    result = ReplayEngine.from_env({ENV_SESSION: str(session)}).run(make_task(tmp_path), recorder)
    assert result.stop == "finished"
    assert recorder.of_kind("tool_result")[0]["is_error"]


def test_missing_names_the_variable_or_the_file(tmp_path: Path) -> None:
    unset = ReplayEngine.from_env({})
    assert unset.missing() is not None
    assert ENV_SESSION in unset.missing()  # type: ignore[operator]
    result = unset.run(make_task(tmp_path), FakeRecorder())
    assert result.stop == "error"
    assert ENV_SESSION in (result.error or "")
    absent = ReplayEngine.from_env({ENV_SESSION: str(tmp_path / "nope.ndjson")})
    assert absent.missing() == f"the recorded session {tmp_path / 'nope.ndjson'} does not exist"
    assert ReplayEngine.from_env({ENV_SESSION: str(tmp_path)}).missing() is not None


def test_the_provider_reads_lazily_and_replays_the_same_way_twice(tmp_path: Path) -> None:
    session = _session(
        tmp_path / "s.ndjson",
        [_line("one", _call("1", "shell", command="true")), "not json at all"],
    )
    provider = ReplayProvider(session)
    assert provider.complete("", [], [], max_tokens=1).text == "one"  # the bad line is unread
    with pytest.raises(ProviderError):
        provider.complete("", [], [], max_tokens=1)
    with pytest.raises(ProviderError, match="line 2"):  # it does not read on past a bad line
        provider.complete("", [], [], max_tokens=1)
    assert ReplayProvider(session).complete("", [], [], max_tokens=1).text == "one"


def test_a_recorded_live_session_replays_to_the_same_result(tmp_path: Path) -> None:
    live = ScriptedProvider(
        [
            turn(shell("echo fixed > fix.txt"), text="fixing", usage=50),
            turn(call("view", {"path": "fix.txt"}), usage=60),
            turn(finish(summary="wrote the fix", verification=[1]), usage=70),
        ],
        model="live-model",
    )
    recording = tmp_path / "recorded.ndjson"
    recorder = RecordingProvider(live, recording)
    assert recorder.name == "scripted"
    assert recorder.model == "live-model"
    first = BuiltinEngine(recorder).run(make_task(tmp_path / "a"), FakeRecorder())
    lines = recording.read_text().splitlines()
    assert len(lines) == 3
    assert ModelTurn.model_validate_json(lines[0]).tool_calls[0].arguments == {
        "command": "echo fixed > fix.txt"
    }
    replay_recorder = FakeRecorder()
    task = make_task(tmp_path / "b")
    again = ReplayEngine.from_env({ENV_SESSION: str(recording)}).run(task, replay_recorder)
    assert again.stop == first.stop == "finished"
    assert again.finish == first.finish
    assert again.usage == first.usage
    assert (task.workspace / "fix.txt").read_text() == "fixed\n"
    assert replay_recorder.commands[0].exit_code == 0


def test_recording_never_writes_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    (tmp_path / "rec.ndjson").symlink_to(target)
    recorder = RecordingProvider(ScriptedProvider([turn(finish())]), tmp_path / "rec.ndjson")
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        recorder.complete("", [], [], max_tokens=1)
    assert target.read_text() == "keep\n"


def test_a_fifo_session_is_refused_without_waiting(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ProviderError, match="not a regular file"):
        ReplayProvider(fifo).complete("", [], [], max_tokens=1)


def test_git_sees_only_the_workspace_change(tmp_path: Path) -> None:
    """A replay writes nothing outside the workspace and output (the evidence is the recorder's)."""
    repo = _repo(tmp_path)
    session = _session(
        tmp_path / "s.ndjson",
        [
            _line("", _call("1", "edit", path="calc.py", old="a - b", new="a + b")),
            _line("", _call("2", "edit", path="../escape.txt", old="", new="x")),
            _line("", _call("3", "finish", status="failure", summary="partial")),
        ],
    )
    result = ReplayEngine.from_env({ENV_SESSION: str(session)}).run(
        make_task(tmp_path, workspace=repo), FakeRecorder()
    )
    assert result.stop == "finished"
    assert not (tmp_path / "escape.txt").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert status.strip() == "M calc.py"


def test_the_bundled_demo_session_fixes_the_demo_project(tmp_path: Path) -> None:
    # The README's main job replays this session on examples/solve/project: it must still fix
    # that project for real (the failing test first, the passing one cited).
    project = Path(__file__).resolve().parents[2] / "examples" / "solve" / "project"
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("calc.py", "test_calc.py", "README.md"):
        (repo / name).write_text((project / name).read_text())
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    engine = ReplayEngine.from_env({ENV_SESSION: "example:solve-calc"})
    assert engine.missing() is None
    recorder = FakeRecorder()
    result = engine.run(make_task(tmp_path, workspace=repo), recorder)
    assert result.stop == "finished"
    assert result.finish is not None
    assert (result.finish.status, result.finish.verification) == ("success", [2])
    assert [c.exit_code for c in recorder.commands] == [1, 0]
    assert "+    return a + b" in git(repo, "diff")


@pytest.mark.parametrize("value", ["example:", "example:../../etc/passwd", "example:Nope!"])
def test_an_example_name_that_names_nothing_is_missing(value: str) -> None:
    engine = ReplayEngine.from_env({ENV_SESSION: value})
    assert engine.missing() == f"{ENV_SESSION}={value} names no bundled example session"


def test_an_unknown_example_is_a_missing_file() -> None:
    missing = ReplayEngine.from_env({ENV_SESSION: "example:no-such-session"}).missing()
    assert missing is not None
    assert "no-such-session.ndjson does not exist" in missing
