"""The codex engine against a fake `codex` that prints `codex exec --json` events."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from holon.agent.conversation import Usage
from holon.agent.engine import EngineResult
from holon.agent.engines.cli_finish import FINISH_FILE
from holon.agent.engines.codex import CodexEngine
from tests.cli_engines.conftest import OPENAI_KEY, MemoryRecorder, Setup, wait_gone

VERIFY = "test -s fixed.txt && echo '2 passed'"


def run(setup: Setup, scenario: str, **task: Any) -> tuple[EngineResult, MemoryRecorder]:
    engine = CodexEngine.from_env(setup.env, model="gpt-5-codex")
    assert engine.missing() is None
    recorder = MemoryRecorder()
    return engine.run(setup.task(scenario, **task), recorder), recorder


def test_success_with_a_verified_command(setup: Setup) -> None:
    result, recorder = run(setup, "success")
    assert result.stop == "finished", result.error
    assert (setup.workspace / "fixed.txt").read_text() == "fixed\n"
    [command] = recorder.commands
    # Recorded as Codex reported it; cited by its script, and still matched.
    assert command.command == shlex.join(["/bin/bash", "-lc", VERIFY])
    assert command.exit_code == 0
    assert "2 passed" in command.output_tail
    assert result.finish is not None
    assert result.finish.verification == [command.id]
    assert recorder.usages == [Usage(input_tokens=1200, output_tokens=345)]
    assert result.usage == Usage(input_tokens=1200, output_tokens=345)
    assert result.model == "gpt-5-codex"  # the stream does not name one: the one asked for
    assert result.engine_version is None
    assert result.turns == 1
    kinds = [e["type"] for e in recorder.events()]
    assert kinds[:2] == ["thread.started", "turn.started"]
    assert kinds[-1] == "turn.completed"
    assert {e["item"]["type"] for e in recorder.events() if "item" in e} >= {
        "reasoning",
        "file_change",
        "command_execution",
        "agent_message",
    }


def test_the_argv_is_headless_and_the_environment_holds_only_codexs_credential(
    setup: Setup,
) -> None:
    setup.env["CLAUDE_CODE_OAUTH_TOKEN"] = "sk-ant-oat01-claude-token-0123"
    setup.env["CODEX_API_KEY"] = "codex-key-0123456789"
    engine = CodexEngine.from_env(setup.env, model="gpt-5-codex")
    task = setup.task("success", extra_env={"ANTHROPIC_API_KEY": "leaked-into-command-env-1"})
    engine.run(task, MemoryRecorder())
    seen = setup.recorded()
    assert seen["argv"] == [
        str(setup.bin / "codex"),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--config",
        "check_for_update_on_startup=false",
        "--config",
        "shell_environment_policy.ignore_default_excludes=false",
        "-C",
        str(setup.workspace),
        "--model",
        "gpt-5-codex",
        "-",
    ]
    assert seen["cwd"] == str(setup.workspace)
    # No system-prompt flag: the system prompt leads the prompt on stdin.
    assert seen["stdin"].startswith(task.system)
    assert task.user in seen["stdin"]
    assert str(setup.output / FINISH_FILE) in seen["stdin"]
    env = seen["env"]
    assert env["OPENAI_API_KEY"] == OPENAI_KEY
    assert env["CODEX_API_KEY"] == "codex-key-0123456789"
    for other in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"):
        assert other not in env
    assert env["CI"] == "1"


def test_a_failing_command_keeps_its_real_exit_code(setup: Setup) -> None:
    result, recorder = run(setup, "failing_command")
    [command] = recorder.commands
    assert command.exit_code == 3
    assert "FAILED test_parse" in command.output_tail
    assert result.stop == "finished"
    assert result.finish is not None
    assert result.finish.status == "failure"
    assert result.finish.verification == [command.id]


def test_a_failed_turn_is_an_error_whatever_finish_json_claims(setup: Setup) -> None:
    result, _ = run(setup, "turn_failed")
    assert result.stop == "error"
    assert result.finish is None
    assert result.error == "codex: the turn failed: stream disconnected before completion"


def test_an_error_event_the_turn_recovered_from_is_not_fatal(setup: Setup) -> None:
    result, recorder = run(setup, "reconnected")
    assert result.stop == "finished", result.error
    assert any(e.get("message") == "Reconnecting... 1/5" for e in recorder.events())


def test_a_fatal_error_event_is_an_error(setup: Setup) -> None:
    result, _ = run(setup, "fatal_error")
    assert result.stop == "error"
    assert result.error == "codex reported an error: unexpected status 401 Unauthorized"


def test_no_finish_json_is_no_finish(setup: Setup) -> None:
    result, recorder = run(setup, "no_finish")
    assert result.stop == "no_finish"
    assert recorder.commands[0].exit_code == 0  # the evidence is kept all the same


@pytest.mark.slow
def test_a_hanging_cli_is_killed_at_the_deadline_with_its_group(setup: Setup) -> None:
    result, recorder = run(setup, "hang", timeout=1.5)
    assert result.stop == "timeout"
    assert result.error == "codex was killed at the deadline"
    assert wait_gone(int(setup.pids.read_text()))
    assert [e["type"] for e in recorder.events()] == ["thread.started", "turn.started"]


def test_missing_cli_and_missing_credentials_are_named(setup: Setup, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    engine = CodexEngine.from_env({"PATH": str(empty), "OPENAI_API_KEY": OPENAI_KEY})
    assert engine.missing() == "the codex CLI (OpenAI Codex) is not on PATH"
    assert engine.run(setup.task("success"), MemoryRecorder()).error == engine.missing()
    no_key = CodexEngine.from_env({"PATH": setup.env["PATH"], "ANTHROPIC_API_KEY": "x" * 20})
    assert no_key.missing() == "CODEX_API_KEY or OPENAI_API_KEY is not set"
    codex_key = CodexEngine.from_env({"PATH": setup.env["PATH"], "CODEX_API_KEY": "k" * 20})
    assert codex_key.missing() is None
