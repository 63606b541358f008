"""The claude-code engine against a fake `claude` that prints Claude Code's stream-json."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from holon.agent.conversation import Usage
from holon.agent.engine import EngineResult
from holon.agent.engines.claude_code import ClaudeCodeEngine
from holon.agent.engines.cli_finish import FINISH_FILE
from tests.cli_engines.conftest import ANTHROPIC_KEY, MemoryRecorder, Setup, wait_gone

VERIFY = "test -s fixed.txt && echo '2 passed'"


def run(setup: Setup, scenario: str, **task: Any) -> tuple[EngineResult, MemoryRecorder]:
    engine = ClaudeCodeEngine.from_env(setup.env, model="claude-sonnet-4-5")
    assert engine.missing() is None
    recorder = MemoryRecorder()
    result = engine.run(setup.task(scenario, **task), recorder)
    return result, recorder


def test_success_with_a_verified_command(setup: Setup) -> None:
    result, recorder = run(setup, "success")
    assert result.stop == "finished", result.error
    assert (setup.workspace / "fixed.txt").read_text() == "fixed\n"  # it really ran
    commands = recorder.commands
    assert [c.command for c in commands] == ["printf 'fixed\\n' > fixed.txt", VERIFY]
    assert [c.exit_code for c in commands] == [0, 0]
    assert "2 passed" in commands[1].output_tail
    finish = result.finish
    assert finish is not None
    assert finish.status == "success"
    assert finish.verification == [commands[1].id]
    assert result.model == "claude-sonnet-4-5-20250929"
    assert result.engine_version == "2.1.0"
    assert result.turns == 3
    # One usage per message (msg_01 came as two events, each with the same usage), with cache
    # reads and writes counted as input.
    assert recorder.usages == [
        Usage(input_tokens=1110, output_tokens=5),
        Usage(input_tokens=1110, output_tokens=5),
        Usage(input_tokens=1110, output_tokens=7),
    ]
    assert result.usage == Usage(input_tokens=3330, output_tokens=17)
    kinds = [e.get("type") for e in recorder.events()]
    assert kinds[0] == "system"
    assert kinds[-1] == "result"
    assert kinds.count("user") == 2


def test_the_argv_is_headless_and_the_environment_holds_only_claudes_credential(
    setup: Setup,
) -> None:
    setup.env["CODEX_API_KEY"] = "codex-secret-value-0123456789"
    setup.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9/anthropic"
    engine = ClaudeCodeEngine.from_env(setup.env, model="claude-sonnet-4-5")
    task = setup.task("success", extra_env={"OPENAI_API_KEY": "leaked-into-command-env-123"})
    engine.run(task, MemoryRecorder())
    seen = setup.recorded()
    argv = seen["argv"]
    assert argv[0] == str(setup.bin / "claude")  # the resolved file, never a shell
    assert argv[1:10] == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "bypassPermissions",
        "--max-turns",
        "12",
        "--model",
    ]
    assert argv[10] == "claude-sonnet-4-5"
    assert argv[11:] == ["--append-system-prompt", task.system]
    assert seen["cwd"] == str(setup.workspace)
    # The prompt arrives on stdin and tells where finish.json goes.
    assert seen["stdin"].startswith(task.user)
    assert str(setup.output / FINISH_FILE) in seen["stdin"]
    env = seen["env"]
    assert env["ANTHROPIC_API_KEY"] == ANTHROPIC_KEY
    for other in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        assert other not in env
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9/anthropic"
    for name in (
        "DISABLE_AUTOUPDATER",
        "DISABLE_TELEMETRY",
        "CI",
        "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB",
    ):
        assert env[name] == "1"
    assert env["FAKE_SCENARIO"] == "success"  # the commands' environment is the base
    assert ("IS_SANDBOX" in env) == (os.geteuid() == 0)


def test_a_long_system_prompt_goes_on_stdin_not_argv(setup: Setup) -> None:
    engine = ClaudeCodeEngine.from_env(setup.env)
    task = setup.task("success")
    big = "Rule. " * 20000  # 120 KB: near the kernel's limit for one argv string
    task = dataclasses.replace(task, system=big)
    result = engine.run(task, MemoryRecorder())
    assert result.stop == "finished"
    seen = setup.recorded()
    assert "--append-system-prompt" not in seen["argv"]
    assert "--model" not in seen["argv"]
    assert seen["stdin"].startswith("Rule. Rule.")


def test_a_failing_command_keeps_its_exit_code(setup: Setup) -> None:
    result, recorder = run(setup, "failing_command")
    failing = recorder.commands[-1]
    assert failing.exit_code == 3  # parsed from "Exit code 3"
    assert "FAILED test_parse" in failing.output_tail
    assert result.stop == "finished"
    assert result.finish is not None
    assert result.finish.status == "failure"
    assert result.finish.verification == [failing.id]


def test_an_error_result_is_an_error_whatever_finish_json_claims(setup: Setup) -> None:
    result, _ = run(setup, "error_result")
    assert result.stop == "error"
    assert result.finish is None
    assert result.error == "claude reported error_during_execution: API error: Overloaded"


def test_max_turns_is_max_steps(setup: Setup) -> None:
    result, _ = run(setup, "max_turns", max_turns=2)
    assert result.stop == "max_steps"
    assert "--max-turns 2" in (result.error or "")
    assert result.turns == 2


def test_an_exit_without_a_result_names_the_stderr_line(setup: Setup) -> None:
    result, recorder = run(setup, "stderr_exit")
    assert result.stop == "error"
    assert result.error == ("claude exited with code 2: Error: Invalid API key · Please run /login")
    assert any(e.get("kind") == "stderr" for e in recorder.entries)


@pytest.mark.slow
def test_a_hanging_cli_is_killed_at_the_deadline_with_its_group(setup: Setup) -> None:
    result, recorder = run(setup, "hang", timeout=1.5)
    assert result.stop == "timeout"
    child = int(setup.pids.read_text())
    assert wait_gone(child), "the CLI's child outlived the deadline"
    assert recorder.events()[0]["subtype"] == "init"  # what came before the hang is evidence


def test_malformed_lines_are_notes_not_crashes(setup: Setup) -> None:
    result, recorder = run(setup, "malformed")
    assert result.stop == "finished"
    notes = recorder.notes()
    assert any("not JSON: Welcome to Claude Code!" in n for n in notes)
    assert any("not a JSON object: [1, 2, 3]" in n for n in notes)
    assert sum("not JSON" in n for n in notes) == 3
    assert not any("sk-ant-api03-abcdef" in n for n in notes)  # a secret-looking word masked


def test_huge_output_is_bounded(setup: Setup) -> None:
    result, recorder = run(setup, "huge")
    assert result.stop == "finished"
    assert any("stream line over" in n for n in recorder.notes())  # the 6 MiB line
    big = recorder.commands[0]
    assert big.exit_code == 0
    assert big.truncated
    for entry in recorder.entries:
        assert len(str(entry)) < 64 * 1024


def test_no_finish_json_is_no_finish(setup: Setup) -> None:
    result, _ = run(setup, "no_finish")
    assert result.stop == "no_finish"
    assert result.error == "the CLI wrote no finish.json"


def test_a_stale_finish_json_does_not_count(setup: Setup) -> None:
    (setup.output / FINISH_FILE).write_text('{"status": "success", "summary": "old"}')
    result, _ = run(setup, "no_finish")
    assert result.stop == "no_finish"


def test_a_finish_json_symlink_is_refused(setup: Setup) -> None:
    result, _ = run(setup, "symlink_finish")
    assert result.stop == "no_finish"
    assert "symlink" in (result.error or "")
    assert (setup.output / FINISH_FILE).is_symlink()


def test_an_invalid_finish_json_is_no_finish_with_the_reason(setup: Setup) -> None:
    result, _ = run(setup, "invalid_finish")
    assert result.stop == "no_finish"
    assert (result.error or "").startswith("finish.json: status:")


def test_a_cited_command_never_run_is_left_out_with_a_note(setup: Setup) -> None:
    result, recorder = run(setup, "unrecorded_citation")
    assert result.finish is not None
    assert result.finish.verification == [recorder.commands[-1].id]
    assert any("not recorded: pytest -q" in n for n in recorder.notes())


def test_the_credential_never_reaches_the_evidence(setup: Setup) -> None:
    # A command that prints its environment: Claude Code's scrub would hide the key from it,
    # the fake does not, and the evidence must still not hold it.
    result, recorder = run(setup, "success", extra_env={"FAKE_LEAK": "1"})
    assert result.stop == "finished"
    printed = recorder.commands[0]
    assert printed.command == "env"
    assert "ANTHROPIC_API_KEY=***" in printed.output_tail  # it was there, and was redacted
    evidence = str(recorder.entries) + str(recorder.commands)
    assert ANTHROPIC_KEY not in evidence


def test_missing_cli_and_missing_credentials_are_named(setup: Setup, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    engine = ClaudeCodeEngine.from_env({"PATH": str(empty), "ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    assert engine.missing() == "the claude CLI (Claude Code) is not on PATH"
    recorder = MemoryRecorder()
    result = engine.run(setup.task("success"), recorder)
    assert result.stop == "error"
    assert result.error == engine.missing()
    assert not setup.record.exists()  # nothing ran
    no_key = ClaudeCodeEngine.from_env({"PATH": setup.env["PATH"]})
    assert no_key.missing() == "ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN is not set"
    oauth = ClaudeCodeEngine.from_env(
        {"PATH": setup.env["PATH"], "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-token-012345"}
    )
    assert oauth.missing() is None


def test_the_token_budget_stops_the_cli(setup: Setup) -> None:
    result, _ = run(setup, "success", max_tokens=2000)
    assert result.stop == "token_budget"


def test_a_cli_that_cannot_start_is_an_error(setup: Setup) -> None:
    engine = ClaudeCodeEngine.from_env(setup.env)
    (setup.bin / "claude").chmod(0o644)  # found by the engine earlier, then not executable
    result = engine.run(setup.task("success"), MemoryRecorder())
    assert result.stop == "error"
    assert "cannot start" in (result.error or "")
    assert shutil.which("claude", path=str(setup.bin)) is None
