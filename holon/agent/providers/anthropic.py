"""Anthropic's Messages API (`POST /v1/messages`) as a Provider.

The translation both ways is pure (`request_body`, `parse_response`); `AnthropicProvider` adds
the key, the URL and the HTTP layer. An answer of an unexpected shape is a ProviderError, never
a crash: the loop records it and the manifest says why the run stopped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from holon.agent.conversation import (
    Message,
    ModelTurn,
    StopReason,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from holon.agent.providers import env as settings
from holon.agent.providers import proxied
from holon.agent.providers.base import ProviderError
from holon.agent.providers.http import JsonHttp

KEY_VARIABLE = "ANTHROPIC_API_KEY"
BASE_URL_VARIABLE = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-6"
API_VERSION = "2023-06-01"
RAW_ARGUMENTS_LIMIT = 2000

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
    # pause_turn: a server-side tool loop paused; Holon offers no server tools.
    "pause_turn": "other",
}


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        return "user", [{"type": "text", "text": message.text}] if message.text else []
    if isinstance(message, ToolResultMessage):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.call_id}
        if message.text:
            block["content"] = message.text
        if message.is_error:
            block["is_error"] = True
        return "user", [block]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    for call in message.tool_calls:
        # Arguments that were not an object were never run; the model is told so in the result.
        arguments = call.arguments if call.arguments is not None else {}
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return "assistant", blocks


def messages_body(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Messages API turns. Consecutive blocks of one role share a turn, so
    the results of parallel tool calls go back together in one user message, before any text;
    an empty message (an assistant turn that said nothing) adds nothing."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def request_body(
    model: str,
    system: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    max_tokens: int,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages_body(messages),
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in tools
        ]
    return body


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _tool_call(block: Mapping[str, Any]) -> ToolCall:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
        raise ProviderError("anthropic: a tool_use block has no id or name")
    if isinstance(arguments, dict):
        return ToolCall(id=call_id, name=name, arguments=arguments)
    raw = json.dumps(arguments, ensure_ascii=False)[:RAW_ARGUMENTS_LIMIT]
    return ToolCall(id=call_id, name=name, arguments=None, raw_arguments=raw)


def parse_response(data: Any) -> ModelTurn:
    """A Messages API answer as a ModelTurn: text blocks joined, tool_use blocks as calls,
    usage counted with the prompt cache's tokens (they are input the model read)."""
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise ProviderError("anthropic: the answer has no content list")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in data["content"]:
        if not isinstance(block, dict):
            raise ProviderError("anthropic: a content block is not an object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise ProviderError("anthropic: a text block has no text")
            texts.append(text)
        elif kind == "tool_use":
            calls.append(_tool_call(block))
        # Other blocks (thinking, server tools) carry nothing the loop acts on.
    stop = data.get("stop_reason")
    stop_reason: StopReason = _STOP_REASONS.get(stop, "other") if isinstance(stop, str) else "other"
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    model = data.get("model")
    return ModelTurn(
        text="\n".join(t for t in texts if t),
        tool_calls=calls,
        stop_reason=stop_reason,
        usage=Usage(
            input_tokens=_count(usage, "input_tokens")
            + _count(usage, "cache_creation_input_tokens")
            + _count(usage, "cache_read_input_tokens"),
            output_tokens=_count(usage, "output_tokens"),
        ),
        model=model if isinstance(model, str) else None,
    )


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str = DEFAULT_MODEL,
        base_url: str = DEFAULT_BASE_URL,
        http: JsonHttp | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self._api_key = api_key  # None only through the host's key proxy, which adds it
        self._http = http or JsonHttp(self.name)
        if api_key:
            self._http.protect(api_key)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], model: str | None = None, *, http: JsonHttp | None = None
    ) -> AnthropicProvider:
        policy = settings.http_policy(env)
        path = proxied.socket_path(env)
        if path is not None:
            # The key stays on the host: requests go keyless to its proxy's socket.
            return cls(
                api_key=None,
                model=settings.model_name(env, model, DEFAULT_MODEL),
                base_url=proxied.ANTHROPIC_BASE,
                http=http or JsonHttp(cls.name, policy=policy, session=proxied.unix_session(path)),
            )
        key = settings.api_key(env, KEY_VARIABLE)
        assert key is not None  # required=True raises instead
        return cls(
            api_key=key,
            model=settings.model_name(env, model, DEFAULT_MODEL),
            base_url=settings.base_url(env, BASE_URL_VARIABLE, DEFAULT_BASE_URL),
            http=http or JsonHttp(cls.name, policy=policy),
        )

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r})"

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        headers = {"anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        data = self._http.post(
            f"{self.base_url}/v1/messages",
            headers,
            request_body(self.model, system, messages, tools, max_tokens),
        )
        return parse_response(data)
