"""The OpenAI-compatible Chat Completions provider on documented answers
(tests/fixtures/providers)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import requests
import responses

from holon.agent.conversation import (
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from holon.agent.providers.base import MissingCredentials, ProviderError
from holon.agent.providers.openai import DEFAULT_MODEL, OpenAIProvider, parse_response
from tests.providers.conftest import OPENAI_KEY, FakeTime, bodies

ANSWERS = bodies("openai-chat")
ENV = {"OPENAI_API_KEY": OPENAI_KEY}
URL = "https://api.openai.com/v1/chat/completions"
SHELL = ToolSpec(
    name="shell",
    description="Run a command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}},
)


def provider(fake_time: FakeTime, env: dict[str, str] | None = None) -> OpenAIProvider:
    return OpenAIProvider.from_env(ENV if env is None else env, http=fake_time.http("openai"))


def ask(fake_time: FakeTime, env: dict[str, str] | None = None) -> Any:
    return provider(fake_time, env).complete(
        "You are terse.", [UserMessage(text="hi")], [SHELL], max_tokens=1024
    )


# Credentials, base URL, model


def test_the_key_is_required_for_openais_own_api() -> None:
    for env in ({}, {"OPENAI_BASE_URL": "https://api.openai.com/v1"}):
        with pytest.raises(MissingCredentials, match=r"^OPENAI_API_KEY is not set$"):
            OpenAIProvider.from_env(env)


def test_another_base_url_needs_no_key() -> None:
    local = OpenAIProvider.from_env({"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/"})
    assert local.base_url == "http://127.0.0.1:8080/v1"
    named = OpenAIProvider.from_env({"OPENAI_BASE_URL": "http://host.docker.internal:8000/v1"})
    assert named.base_url == "http://host.docker.internal:8000/v1"


def test_model_comes_from_the_argument_else_holon_model_else_the_default() -> None:
    assert OpenAIProvider.from_env(ENV).model == DEFAULT_MODEL
    assert OpenAIProvider.from_env({**ENV, "HOLON_MODEL": "qwen3"}).model == "qwen3"
    assert OpenAIProvider.from_env({**ENV, "HOLON_MODEL": "qwen3"}, model="o4").model == "o4"


@pytest.mark.parametrize(
    "url", ["api.openai.com/v1", "file:///etc/passwd", "http://", "http://[::1"]
)
def test_a_bad_base_url_is_named(url: str) -> None:
    with pytest.raises(ProviderError, match=r"^OPENAI_BASE_URL is not an http\(s\) URL"):
        OpenAIProvider.from_env({**ENV, "OPENAI_BASE_URL": url})


def test_a_base_url_with_a_password_is_not_echoed() -> None:
    with pytest.raises(ProviderError) as caught:
        OpenAIProvider.from_env({"OPENAI_BASE_URL": "ftp://me:hunter22@host"})
    assert "hunter22" not in str(caught.value)


# Answers


@responses.activate
def test_a_text_answer_and_the_request(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["text"])
    turn = ask(fake_time)
    assert turn.text == "Hello! How can I assist you today?"
    assert turn.stop_reason == "end_turn"
    assert turn.tool_calls == []
    assert turn.usage == Usage(input_tokens=19, output_tokens=10)
    assert turn.model == "gpt-4.1-2025-04-14"
    request = responses.calls[0].request
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert json.loads(request.body or b"") == {
        "model": DEFAULT_MODEL,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"},
        ],
        # OpenAI's own API: its newer models refuse max_tokens
        "max_completion_tokens": 1024,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "shell",
                    "description": "Run a command",
                    "parameters": {
                        "type": "object",
                        "properties": {"command": {"type": "string"}},
                    },
                },
            }
        ],
        "tool_choice": "auto",
    }


@responses.activate
def test_a_compatible_server_gets_max_tokens_and_no_key(fake_time: FakeTime) -> None:
    responses.post("http://llm.test:8000/v1/chat/completions", json=ANSWERS["text"])
    provider(fake_time, {"OPENAI_BASE_URL": "http://llm.test:8000/v1"}).complete(
        "", [UserMessage(text="hi")], [], max_tokens=64
    )
    request = responses.calls[0].request
    assert "authorization" not in {k.lower() for k in request.headers}
    body = json.loads(request.body or b"")
    assert body["max_tokens"] == 64
    assert "max_completion_tokens" not in body
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in body
    assert "tool_choice" not in body


@responses.activate
def test_a_tool_call(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["tool_calls"])
    turn = ask(fake_time)
    assert turn.text == ""
    assert turn.stop_reason == "tool_use"
    assert turn.tool_calls == [
        ToolCall(id="call_abc123", name="get_current_weather", arguments={"location": "Boston, MA"})
    ]
    assert turn.usage == Usage(input_tokens=82, output_tokens=17)


@responses.activate
def test_parallel_tool_calls(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["parallel_tool_calls"])
    turn = ask(fake_time)
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_1", "view", {"path": "a.py"}),
        ("call_2", "view", {"path": "b.py"}),
    ]


@responses.activate
def test_tool_arguments_that_are_not_a_json_object_are_kept_raw(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["bad_arguments"])
    turn = ask(fake_time)
    assert turn.stop_reason == "tool_use"
    truncated, a_list = turn.tool_calls
    assert (truncated.arguments, truncated.raw_arguments) == (None, '{"command": "ls')
    assert (a_list.arguments, a_list.raw_arguments) == (None, '["ls"]')


def test_raw_arguments_are_bounded_and_odd_ones_handled() -> None:
    def call(arguments: Any, **extra: Any) -> ToolCall:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "x", "arguments": arguments}}],
        }
        answer = {"choices": [{"message": message, "finish_reason": "stop", **extra}]}
        (only,) = parse_response(answer).tool_calls
        return only

    long = call("x" * 10_000)
    assert long.arguments is None
    assert len(long.raw_arguments or "") == 2000
    assert call("").arguments == {}  # a call without arguments
    assert call({"a": 1}).arguments == {"a": 1}  # servers that send the object itself
    assert call(None).raw_arguments == "null"
    assert call("[" * 50_000).arguments is None  # too deep for the parser: not a crash
    assert call("{}").id == "call_0"  # servers that send no id get one


@responses.activate
def test_a_refusal(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["refusal"])
    turn = ask(fake_time)
    assert turn.stop_reason == "refusal"
    assert turn.text == "I'm sorry, I cannot assist with that request."


@responses.activate
def test_a_length_stop_and_a_content_filter(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["length"])
    responses.post(URL, json=ANSWERS["content_filter"])
    first = ask(fake_time)
    assert (first.stop_reason, first.text) == ("max_tokens", "The first part of a long answer")
    assert ask(fake_time).stop_reason == "refusal"


def test_content_parts_and_unknown_finish_reasons() -> None:
    message = {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"x": 1}]}
    turn = parse_response({"choices": [{"message": message, "finish_reason": "eos"}]})
    assert (turn.text, turn.stop_reason, turn.usage) == ("a", "other", Usage())


@pytest.mark.parametrize(
    "answer",
    [
        [],
        {"choices": []},
        {"choices": [1]},
        {"choices": [{"finish_reason": "stop"}]},
        {"choices": [{"message": {"content": 5}}]},
        {"choices": [{"message": {"tool_calls": {"id": "x"}}}]},
        {"choices": [{"message": {"tool_calls": [{"id": "x", "type": "function"}]}}]},
        {"choices": [{"message": {"tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]}}]},
    ],
)
@responses.activate
def test_an_unexpected_shape_is_a_provider_error_not_a_crash(
    fake_time: FakeTime, answer: Any
) -> None:
    responses.post(URL, json=answer)
    with pytest.raises(ProviderError) as caught:
        ask(fake_time)
    assert str(caught.value).startswith("openai: ")
    assert caught.value.retryable is False


@responses.activate
def test_a_malformed_json_body(fake_time: FakeTime) -> None:
    responses.post(URL, body='{"choices": [', status=200)
    with pytest.raises(ProviderError, match=r"^openai: answer was not JSON \(HTTP 200, 13 bytes\)"):
        ask(fake_time)


# Errors and retries


@responses.activate
def test_401_is_final_and_never_shows_the_key(
    fake_time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echoed = {"error": {**ANSWERS["error_invalid_api_key"]["error"]}}
    echoed["error"]["message"] = f"Incorrect API key provided: {OPENAI_KEY}."
    responses.post(URL, status=401, json=echoed)
    with pytest.raises(ProviderError) as caught:
        ask(fake_time)
    assert str(caught.value) == (
        "openai: HTTP 401 invalid_request_error invalid_api_key: Incorrect API key provided: ***."
    )
    assert caught.value.retryable is False
    assert len(responses.calls) == 1
    assert OPENAI_KEY not in caplog.text


@responses.activate
def test_400_is_final(fake_time: FakeTime) -> None:
    responses.post(URL, status=400, json=ANSWERS["error_bad_request"])
    with pytest.raises(ProviderError, match=r"HTTP 400 invalid_request_error invalid_type"):
        ask(fake_time)
    assert len(responses.calls) == 1


@responses.activate
def test_429_honours_retry_after_ms(fake_time: FakeTime) -> None:
    headers = {"retry-after-ms": "2000", "retry-after": "2"}
    responses.post(URL, status=429, json=ANSWERS["error_rate_limit"], headers=headers)
    responses.post(URL, json=ANSWERS["text"])
    assert ask(fake_time).text == "Hello! How can I assist you today?"
    assert fake_time.waits == [2.0]


@responses.activate
def test_503_then_a_dropped_connection_then_success(fake_time: FakeTime) -> None:
    responses.post(URL, status=503, json=ANSWERS["error_server"])
    responses.post(URL, body=requests.ConnectionError("reset"))
    responses.post(URL, json=ANSWERS["tool_calls"])
    assert ask(fake_time).stop_reason == "tool_use"
    assert fake_time.waits == [1, 2]


@responses.activate
def test_retries_exhausted(fake_time: FakeTime) -> None:
    for _ in range(5):
        responses.post(URL, status=500, json=ANSWERS["error_server"])
    with pytest.raises(ProviderError) as caught:
        ask(fake_time)
    assert str(caught.value) == (
        "openai: HTTP 500 server_error: The server had an error while processing your request. "
        "Sorry about that! (gave up after 5 attempts in 15s)"
    )
    assert caught.value.retryable is True


# The history, translated


@responses.activate
def test_a_multi_turn_history_with_tool_results(fake_time: FakeTime) -> None:
    responses.post(URL, json=ANSWERS["text"])
    history = [
        UserMessage(text="Fix the test."),
        AssistantMessage(
            text="Looking first.",
            tool_calls=[
                ToolCall(id="call_a", name="shell", arguments={"command": "pytest -q"}),
                ToolCall(id="call_b", name="view", arguments={"path": "calc.py"}),
            ],
        ),
        ToolResultMessage(call_id="call_a", name="shell", text="1 failed"),
        ToolResultMessage(call_id="call_b", name="view", text="no such file", is_error=True),
        AssistantMessage(
            tool_calls=[ToolCall(id="call_c", name="shell", arguments=None, raw_arguments="{bad")]
        ),
        ToolResultMessage(call_id="call_c", name="shell", text="not JSON", is_error=True),
        UserMessage(text="Call finish."),
    ]
    provider(fake_time).complete("sys", history, [SHELL], max_tokens=2048)
    sent = json.loads(responses.calls[0].request.body or b"")["messages"]
    assert sent == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Fix the test."},
        {
            "role": "assistant",
            "content": "Looking first.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "shell", "arguments": '{"command": "pytest -q"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "view", "arguments": '{"path": "calc.py"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "1 failed"},
        {"role": "tool", "tool_call_id": "call_b", "content": "error: no such file"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_c",
                    "type": "function",
                    "function": {"name": "shell", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_c", "content": "error: not JSON"},
        {"role": "user", "content": "Call finish."},
    ]
