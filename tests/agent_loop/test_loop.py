"""The built-in loop over scripted providers: every way it stops, and what it records."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from holon.agent.conversation import (
    AssistantMessage,
    Message,
    ModelTurn,
    ToolResultMessage,
    UserMessage,
)
from holon.agent.engine import Engine
from holon.agent.engines.builtin import BuiltinEngine
from holon.agent.providers.base import MissingCredentials, ProviderError
from tests.agent_loop.fakes import (
    FakeRecorder,
    Repeating,
    ScriptedProvider,
    call,
    finish,
    make_task,
    shell,
    turn,
)


def test_the_loop_runs_tools_in_order_and_finishes(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            turn(shell("echo one > a.txt"), shell("cat a.txt"), text="Let me look.", usage=10),
            turn(finish(summary="wrote a.txt", verification=[2]), usage=5),
        ]
    )
    recorder = FakeRecorder()
    engine: Engine = BuiltinEngine(provider)
    result = engine.run(make_task(tmp_path), recorder)
    assert result.stop == "finished"
    assert result.finish is not None
    assert result.finish.summary == "wrote a.txt"
    assert result.turns == 2
    assert result.usage.total == 15
    assert result.model == "scripted-1"
    assert recorder.total.total == 15
    assert provider.tools == ["shell", "view", "edit", "finish"]
    # The second request saw the whole linear history: prompt, the turn, both results in order.
    history = provider.requests[1]
    assert isinstance(history[0], UserMessage)
    assert history[0].text == "Do the task."
    assert isinstance(history[1], AssistantMessage)
    assert history[1].text == "Let me look."
    results = [m for m in history if isinstance(m, ToolResultMessage)]
    assert [r.text.splitlines()[0][:20] for r in results] == [
        "command #1 exited 0 ",
        "command #2 exited 0 ",
    ]
    assert "one" in results[1].text
    assert recorder.kinds() == [
        "start",
        "prompt",
        "turn",
        "tool_result",
        "tool_result",
        "turn",
        "tool_result",
        "stop",
    ]
    assert recorder.of_kind("stop")[0]["stop"] == "finished"
    assert recorder.of_kind("turn")[0]["tool_calls"][0]["arguments"] == {
        "command": "echo one > a.txt"
    }


def test_calls_after_finish_in_the_same_turn_are_not_run(tmp_path: Path) -> None:
    provider = ScriptedProvider([turn(finish(), shell("touch after"))])
    task = make_task(tmp_path)
    result = BuiltinEngine(provider).run(task, FakeRecorder())
    assert result.stop == "finished"
    assert not (task.workspace / "after").exists()


def test_an_invalid_finish_is_an_error_result_and_the_loop_goes_on(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [
            turn(call("finish", {"status": "success"})),
            turn(finish(status="failure", summary="could not")),
        ]
    )
    recorder = FakeRecorder()
    result = BuiltinEngine(provider).run(make_task(tmp_path), recorder)
    assert result.stop == "finished"
    assert result.finish is not None
    assert result.finish.status == "failure"
    first = recorder.of_kind("tool_result")[0]
    assert first["is_error"]
    assert first["text"] == "bad arguments for finish: summary: Field required"
    seen = provider.requests[1][-1]
    assert isinstance(seen, ToolResultMessage)
    assert seen.is_error


def test_bad_arguments_and_unknown_tools_reach_the_model_and_the_transcript(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(
        [
            turn(
                call("shell", None, raw_arguments="{not json"),
                call("view", {"path": 7}),
                call("browse", {"url": "http://example.com"}),
                call("view", {"path": "/proc/self/environ"}),
                call("edit", {"path": "/etc/holon-test", "old": "", "new": "x"}),
            ),
            turn(finish(status="failure", summary="gave up")),
        ]
    )
    recorder = FakeRecorder()
    result = BuiltinEngine(provider).run(make_task(tmp_path), recorder)
    assert result.stop == "finished"
    results = recorder.of_kind("tool_result")[:5]
    assert all(r["is_error"] for r in results)
    assert [r["text"] for r in results] == [
        'the arguments of shell were not a JSON object (received: "{not json")',
        "bad arguments for view: path: Input should be a valid string",
        "unknown tool 'browse'; the tools are shell, view, edit, finish",
        "path outside the workspace: /proc/self/environ",
        "path outside the workspace: /etc/holon-test",
    ]
    assert not Path("/etc/holon-test").exists()
    assert len([m for m in provider.requests[1] if isinstance(m, ToolResultMessage)]) == 5


def test_the_turn_budget_stops_the_loop(tmp_path: Path) -> None:
    provider = Repeating(turn(shell("true")))
    recorder = FakeRecorder()
    result = BuiltinEngine(provider).run(make_task(tmp_path, max_turns=3), recorder)
    assert result.stop == "max_steps"
    assert result.turns == 3
    assert result.finish is None
    assert len(provider.requests) == 3
    assert len(recorder.commands) == 3
    assert result.error == "the turn budget ran out (3 model requests)"


def test_the_deadline_stops_the_loop(tmp_path: Path) -> None:
    now = [1000.0]
    provider = Repeating(turn(shell("true")))

    def clock() -> float:
        now[0] += 1.0  # every look at the clock is a second later
        return now[0]

    engine = BuiltinEngine(provider, clock=clock)
    result = engine.run(make_task(tmp_path, deadline=1010.0), FakeRecorder())
    assert result.stop == "timeout"
    assert 0 < result.turns < 10
    past = BuiltinEngine(ScriptedProvider([]), clock=lambda: 2000.0)
    result = past.run(make_task(tmp_path / "b", deadline=1010.0), FakeRecorder())
    assert result.stop == "timeout"
    assert result.turns == 0


def test_a_real_deadline_cuts_a_running_command_and_stops(tmp_path: Path) -> None:
    provider = Repeating(turn(shell("sleep 30")))
    recorder = FakeRecorder()
    started = time.monotonic()
    result = BuiltinEngine(provider).run(
        make_task(tmp_path, deadline=time.monotonic() + 0.5), recorder
    )
    assert time.monotonic() - started < 5
    assert result.stop == "timeout"
    assert recorder.commands[0].timed_out


def test_the_token_budget_stops_the_loop(tmp_path: Path) -> None:
    provider = Repeating(turn(shell("true"), usage=600))
    result = BuiltinEngine(provider).run(
        make_task(tmp_path, max_tokens=1000, max_output_tokens=4096), FakeRecorder()
    )
    assert result.stop == "token_budget"
    assert result.turns == 2
    assert result.usage.total == 1200
    # The second request could not ask for more than what was left.
    assert provider.max_tokens == [1000, 400]


def test_a_refusal_stops_the_loop(tmp_path: Path) -> None:
    provider = ScriptedProvider([turn(text="I can't help with that.", stop_reason="refusal")])
    result = BuiltinEngine(provider).run(make_task(tmp_path), FakeRecorder())
    assert result.stop == "refused"
    assert result.error == "the provider refused: I can't help with that."
    assert result.turns == 1


def test_a_provider_error_stops_the_loop_with_its_message(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [turn(shell("true")), ProviderError("HTTP 529 overloaded after 4 attempts", status=529)]
    )
    recorder = FakeRecorder()
    result = BuiltinEngine(provider).run(make_task(tmp_path), recorder)
    assert result.stop == "error"
    assert result.error == "the provider failed: HTTP 529 overloaded after 4 attempts"
    assert result.turns == 1
    assert recorder.of_kind("provider_error")[0]["turn"] == 2
    missing = BuiltinEngine(ScriptedProvider([MissingCredentials("ANTHROPIC_API_KEY is not set")]))
    assert missing.run(make_task(tmp_path / "b"), FakeRecorder()).stop == "error"


def test_a_model_that_never_calls_finish_is_nudged_then_stopped(tmp_path: Path) -> None:
    provider = Repeating(turn(text="All done, the tests pass!"))
    recorder = FakeRecorder()
    result = BuiltinEngine(provider).run(make_task(tmp_path), recorder)
    assert result.stop == "no_finish"
    assert result.finish is None
    assert result.turns == 3
    assert result.error == "the model stopped without calling finish"
    nudges = recorder.of_kind("nudge")
    assert len(nudges) == 2
    assert "call `finish`" in nudges[0]["text"]
    assert "(1 reminder left" in nudges[0]["text"]
    assert "(0 reminders left" in nudges[1]["text"]
    last = provider.requests[-1][-1]
    assert isinstance(last, UserMessage)
    assert last.text == nudges[1]["text"]


def test_a_max_tokens_stop_without_a_call_is_nudged_and_the_count_resets(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(
        [
            turn(text="Here is my long plan...", stop_reason="max_tokens"),
            turn(text="continuing"),
            turn(shell("true")),
            turn(text="hm"),
            turn(text="hm"),
            turn(finish(status="failure", summary="stuck")),
        ]
    )
    recorder = FakeRecorder()
    result = BuiltinEngine(provider).run(make_task(tmp_path), recorder)
    assert result.stop == "finished"
    assert [n["stop_reason"] for n in recorder.of_kind("nudge")] == [
        "max_tokens",
        "end_turn",
        "end_turn",
        "end_turn",
    ]


def test_missing_delegates_to_the_provider(tmp_path: Path) -> None:
    class Keyless(ScriptedProvider):
        def missing(self) -> str | None:
            return "ANTHROPIC_API_KEY is not set"

    assert BuiltinEngine(Keyless([])).missing() == "ANTHROPIC_API_KEY is not set"
    assert BuiltinEngine(ScriptedProvider([])).missing() is None


def test_the_model_sees_command_ids_it_can_cite(tmp_path: Path) -> None:
    def cite(messages: Sequence[Message]) -> ModelTurn:
        seen = messages[-1]
        assert isinstance(seen, ToolResultMessage)
        ident = int(seen.text.split()[1].lstrip("#"))
        return turn(finish(summary="verified", verification=[ident]))

    provider = ScriptedProvider([turn(shell("exit 0")), cite])
    result = BuiltinEngine(provider).run(make_task(tmp_path), FakeRecorder())
    assert result.finish is not None
    assert result.finish.verification == [1]
