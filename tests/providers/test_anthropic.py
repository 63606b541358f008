"""The Anthropic Messages provider on the API's documented answers (tests/fixtures/providers)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import responses

from holon.agent.conversation import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from holon.agent.providers.anthropic import DEFAULT_MODEL, AnthropicProvider, parse_response
from holon.agent.providers.base import MissingCredentials, ProviderError
from tests.providers.conftest import ANTHROPIC_KEY, FakeTime, bodies

ANSWERS = bodies("anthropic-messages")
ENV = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
URL = "https://api.anthropic.com/v1/messages"
SHELL = ToolSpec(
    name="shell",
    description="Run a command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}},
)


def provider(fake_time: FakeTime, env: dict[str, str] | None = None) -> AnthropicProvider:
    return AnthropicProvider.from_env(env or ENV, http=fake_time.http("anthropic"))


def ask(fake_time: FakeTime, **kwargs: Any) -> Any:
    return provider(fake_time).complete(
        "You are terse.", [UserMessage(text="hi")], [SHELL], max_tokens=1024, **kwargs
    )


# Credentials, base URL, model


def test_the_key_is_required_and_named() -> None:
    for env in ({}, {"ANTHROPIC_API_KEY": "  "}):
        with pytest.raises(MissingCredentials, match=r"^ANTHROPIC_API_KEY is not set$"):
            AnthropicProvider.from_env(env)


def test_a_key_with_a_line_break_inside_is_refused_without_showing_it() -> None:
    with pytest.raises(MissingCredentials) as caught:
        AnthropicProvider.from_env({"ANTHROPIC_API_KEY": ANTHROPIC_KEY + "\nX: y"})
    assert str(caught.value) == "ANTHROPIC_API_KEY holds whitespace or control characters"


def test_model_comes_from_the_argument_else_holon_model_else_the_default() -> None:
    assert AnthropicProvider.from_env(ENV).model == DEFAULT_MODEL
    assert AnthropicProvider.from_env({**ENV, "HOLON_MODEL": "claude-x"}).model == "claude-x"
    chosen = AnthropicProvider.from_env({**ENV, "HOLON_MODEL": "claude-x"}, model="claude-y")
    assert chosen.model == "claude-y"


def test_a_bad_base_url_is_named() -> None:
    with pytest.raises(ProviderError, match=r"^ANTHROPIC_BASE_URL is not an http\(s\) URL"):
        AnthropicProvider.from_env({**ENV, "ANTHROPIC_BASE_URL": "ftp://x"})


def test_the_key_is_not_in_the_providers_repr() -> None:
    assert ANTHROPIC_KEY not in repr(AnthropicProvider.from_env(ENV))
    assert ANTHROPIC_KEY not in repr(vars(AnthropicProvider.from_env(ENV)).get("_http"))


# Answers


@responses.activate
def test_a_text_answer(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["text"])
    turn = ask(fake_time)
    assert turn.text == "Here's the answer to your question..."
    assert turn.tool_calls == []
    assert turn.stop_reason == "end_turn"
    assert turn.usage == Usage(input_tokens=100, output_tokens=50)
    assert turn.model == "claude-sonnet-4-6"
    request = responses.calls[0].request
    assert request.headers["x-api-key"] == ANTHROPIC_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.body or b"") == {
        "model": DEFAULT_MODEL,
        "max_tokens": 1024,
        "system": "You are terse.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "tools": [
            {
                "name": "shell",
                "description": "Run a command",
                "input_schema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                },
            }
        ],
    }


@responses.activate
def test_the_base_url_comes_from_anthropic_base_url(fake_time: FakeTime) -> None:
    responses.post("http://gateway.test/anthropic/v1/messages", json=ANSWERS["text"])
    env = {**ENV, "ANTHROPIC_BASE_URL": "http://gateway.test/anthropic/"}
    provider(fake_time, env).complete("", [UserMessage(text="hi")], [], max_tokens=10)
    body = json.loads(responses.calls[0].request.body or b"")
    assert "system" not in body  # an empty system prompt is left out
    assert "tools" not in body


@responses.activate
def test_a_tool_call(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["tool_use"])
    turn = ask(fake_time)
    assert turn.text == "I'll check the current weather in San Francisco for you."
    assert turn.tool_calls == [
        ToolCall(
            id="toolu_01A09q90qw90lq917835lq9",
            name="get_weather",
            arguments={"location": "San Francisco, CA", "unit": "celsius"},
        )
    ]
    assert turn.stop_reason == "tool_use"
    assert turn.usage == Usage(input_tokens=472, output_tokens=91)


@responses.activate
def test_parallel_tool_calls_and_cached_input_counted(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["parallel_tool_use"])
    turn = ask(fake_time)
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [
        ("toolu_01", {"path": "a.py"}),
        ("toolu_02", {"path": "b.py"}),
    ]
    # The prompt cache's writes and reads are input the model read.
    assert turn.usage == Usage(input_tokens=1200 + 2048 + 4096, output_tokens=120)


@responses.activate
def test_a_refusal(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["refusal"])
    turn = ask(fake_time)
    assert turn.stop_reason == "refusal"
    assert turn.text == ""
    assert turn.tool_calls == []


@responses.activate
def test_a_max_tokens_stop(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["max_tokens"])
    turn = ask(fake_time)
    assert turn.stop_reason == "max_tokens"
    assert turn.text == "The first part of a long answer"


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("stop_sequence", "end_turn"),
        ("model_context_window_exceeded", "max_tokens"),
        ("pause_turn", "other"),
        ("something_new", "other"),
        (None, "other"),
    ],
)
def test_every_stop_reason_maps(stop: str | None, expected: str) -> None:
    assert parse_response({**ANSWERS["text"], "stop_reason": stop}).stop_reason == expected


def test_blocks_the_loop_does_not_use_are_skipped_and_usage_may_be_missing() -> None:
    answer = {
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "abc"},
            {"type": "text", "text": "done"},
        ],
        "stop_reason": "end_turn",
    }
    turn = parse_response(answer)
    assert turn.text == "done"
    assert turn.usage == Usage()
    assert turn.model is None


def test_tool_input_that_is_not_an_object_is_kept_raw() -> None:
    answer = {
        "content": [{"type": "tool_use", "id": "toolu_9", "name": "shell", "input": ["ls"]}],
        "stop_reason": "tool_use",
    }
    (call,) = parse_response(answer).tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '["ls"]'


@pytest.mark.parametrize(
    "answer",
    [
        [],
        {"type": "message"},
        {"content": "text"},
        {"content": [1]},
        {"content": [{"type": "text"}]},
        {"content": [{"type": "tool_use", "name": "shell", "input": {}}]},
        {"content": [{"type": "tool_use", "id": "toolu_1", "input": {}}]},
    ],
)
@responses.activate
def test_an_unexpected_shape_is_a_provider_error_not_a_crash(
    fake_time: FakeTime, answer: Any
) -> None:
    responses.post(URL, json=answer)
    with pytest.raises(ProviderError) as caught:
        ask(fake_time)
    assert str(caught.value).startswith("anthropic: ")
    assert caught.value.retryable is False


@responses.activate
def test_a_malformed_json_body(fake_time: FakeTime) -> None:
    responses.post(URL, body='{"content": [{"type": "text", "text": "cut off', status=200)
    with pytest.raises(ProviderError, match=r"^anthropic: answer was not JSON \(HTTP 200"):
        ask(fake_time)


# Errors and retries, with the documented error envelope


@responses.activate
def test_401_is_final_and_one_line_without_the_key(
    fake_time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    responses.post(URL, status=401, json=ANSWERS["error_authentication"])
    with pytest.raises(ProviderError) as caught:
        ask(fake_time)
    assert str(caught.value) == "anthropic: HTTP 401 authentication_error: invalid x-api-key"
    assert caught.value.status == 401
    assert len(responses.calls) == 1
    assert ANTHROPIC_KEY not in caplog.text


@responses.activate
def test_400_is_final(fake_time: FakeTime) -> None:
    responses.post(URL, status=400, json=ANSWERS["error_invalid_request"])
    with pytest.raises(ProviderError, match=r"HTTP 400 invalid_request_error: max_tokens"):
        ask(fake_time)
    assert len(responses.calls) == 1


@responses.activate
def test_529_overloaded_then_success(fake_time: FakeTime) -> None:
    responses.post(URL, status=529, json=ANSWERS["error_overloaded"])
    responses.post(URL, status=529, json=ANSWERS["error_overloaded"], headers={"retry-after": "3"})
    responses.post(URL, json=ANSWERS["text"])
    assert ask(fake_time).text == "Here's the answer to your question..."
    assert fake_time.waits == [1, 3]


@responses.activate
def test_429_rate_limit_honours_retry_after(fake_time: FakeTime) -> None:
    responses.post(URL, status=429, json=ANSWERS["error_rate_limit"], headers={"retry-after": "12"})
    responses.post(URL, json=ANSWERS["tool_use"])
    assert ask(fake_time).stop_reason == "tool_use"
    assert fake_time.waits == [12]


# The history, translated


@responses.activate
def test_a_multi_turn_history_with_tool_results(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["text"])
    history = [
        UserMessage(text="Fix the test."),
        AssistantMessage(
            text="Looking first.",
            tool_calls=[
                ToolCall(id="toolu_a", name="shell", arguments={"command": "pytest -q"}),
                ToolCall(id="toolu_b", name="view", arguments={"path": "calc.py"}),
            ],
        ),
        ToolResultMessage(call_id="toolu_a", name="shell", text="1 failed", is_error=False),
        ToolResultMessage(call_id="toolu_b", name="view", text="no such file", is_error=True),
        AssistantMessage(
            tool_calls=[
                ToolCall(id="toolu_c", name="shell", arguments=None, raw_arguments="{bad"),
            ],
        ),
        ToolResultMessage(
            call_id="toolu_c", name="shell", text="arguments were not JSON", is_error=True
        ),
        UserMessage(text="You have 3 turns left."),
        AssistantMessage(text=""),  # an empty turn adds nothing
        UserMessage(text="Call finish."),
    ]
    provider(fake_time).complete("sys", history, [SHELL], max_tokens=2048)
    sent = json.loads(responses.calls[0].request.body or b"")["messages"]
    assert sent == [
        {"role": "user", "content": [{"type": "text", "text": "Fix the test."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking first."},
                {
                    "type": "tool_use",
                    "id": "toolu_a",
                    "name": "shell",
                    "input": {"command": "pytest -q"},
                },
                {"type": "tool_use", "id": "toolu_b", "name": "view", "input": {"path": "calc.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "1 failed"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": "no such file",
                    "is_error": True,
                },
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_c", "name": "shell", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_c",
                    "content": "arguments were not JSON",
                    "is_error": True,
                },
                {"type": "text", "text": "You have 3 turns left."},
                {"type": "text", "text": "Call finish."},
            ],
        },
    ]
