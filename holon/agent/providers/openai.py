"""OpenAI-compatible Chat Completions (`POST {base}/chat/completions`) as a Provider.

Any base URL works (OPENAI_BASE_URL), so local servers such as llama.cpp or vLLM serve the
built-in engine too; they need no key. The translation both ways is pure (`request_body`,
`parse_response`). Tool arguments arrive as a JSON string the model wrote: one that is not a
JSON object becomes a call without arguments (and its raw text), which the loop answers with an
error the model can correct, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

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

KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
DEFAULT_MODEL = "gpt-5"
RAW_ARGUMENTS_LIMIT = 2000

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.text}
    if isinstance(message, ToolResultMessage):
        # Chat Completions has no error flag on a tool result: the text says it.
        text = f"error: {message.text}" if message.is_error else message.text
        return {"role": "tool", "tool_call_id": message.call_id, "content": text}
    turn: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        turn["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    # Arguments that were not an object are sent back as {}: local servers
                    # parse this string to render their chat template and fail on bad JSON.
                    "arguments": json.dumps(call.arguments or {}, ensure_ascii=False),
                },
            }
            for call in message.tool_calls
        ]
    return turn


def request_body(
    model: str,
    system: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    max_tokens: int,
    *,
    openai_itself: bool = True,
) -> dict[str, Any]:
    """The request. OpenAI's own API takes `max_completion_tokens` (its newer models refuse
    `max_tokens`); other servers get `max_tokens`, the name every compatible server reads."""
    chat: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    chat.extend(_message(m) for m in messages)
    body: dict[str, Any] = {"model": model, "messages": chat}
    body["max_completion_tokens" if openai_itself else "max_tokens"] = max_tokens
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in tools
        ]
        body["tool_choice"] = "auto"
    return body


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments as an object, or None and the text the model sent (bounded)."""
    if isinstance(raw, dict):  # some compatible servers send the object itself
        return raw, None
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            return parsed, None
        return None, raw[:RAW_ARGUMENTS_LIMIT]
    return None, json.dumps(raw, ensure_ascii=False)[:RAW_ARGUMENTS_LIMIT]


def _tool_call(index: int, item: Any) -> ToolCall:
    if not isinstance(item, dict) or not isinstance(item.get("function"), dict):
        raise ProviderError("openai: a tool call has no function")
    function = item["function"]
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ProviderError("openai: a tool call has no function name")
    call_id = item.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_{index}"  # some local servers send none; the loop needs one
    arguments, raw = _arguments(function.get("arguments"))
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw)


def _content(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as some servers answer
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    raise ProviderError("openai: the message content is neither text nor parts")


def parse_response(data: Any) -> ModelTurn:
    """`choices[0].message` as a ModelTurn: content, tool calls, a refusal (its text kept)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError("openai: the answer has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ProviderError("openai: the first choice has no message")
    text = _content(message.get("content"))
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ProviderError("openai: tool_calls is not a list")
    calls = [_tool_call(i, item) for i, item in enumerate(raw_calls)]
    finish = choices[0].get("finish_reason")
    stop_reason: StopReason = (
        _STOP_REASONS.get(finish, "other") if isinstance(finish, str) else "other"
    )
    if calls and stop_reason in ("end_turn", "other"):
        stop_reason = "tool_use"  # some servers finish a tool call with "stop"
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        stop_reason = "refusal"
        text = text or refusal
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    model = data.get("model")
    return ModelTurn(
        text=text,
        tool_calls=calls,
        stop_reason=stop_reason,
        usage=Usage(
            input_tokens=_count(usage, "prompt_tokens"),
            output_tokens=_count(usage, "completion_tokens"),
        ),
        model=model if isinstance(model, str) else None,
    )


def is_openai_itself(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "").lower() == OPENAI_HOST


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str = DEFAULT_MODEL,
        base_url: str = DEFAULT_BASE_URL,
        http: JsonHttp | None = None,
        openai_itself: bool | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self._http = http or JsonHttp(self.name)
        if api_key:
            self._http.protect(api_key)
        # Behind the host's key proxy the base URL is a placeholder: the runner says which API.
        self.openai_itself = is_openai_itself(base_url) if openai_itself is None else openai_itself

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], model: str | None = None, *, http: JsonHttp | None = None
    ) -> OpenAIProvider:
        """The key is required for OpenAI's own API only: another base URL (a local server,
        reached on loopback or by a name such as host.docker.internal) may need none."""
        policy = settings.http_policy(env)
        path = proxied.socket_path(env)
        if path is not None:
            # The key stays on the host: requests go keyless to its proxy's socket.
            return cls(
                api_key=None,
                model=settings.model_name(env, model, DEFAULT_MODEL),
                base_url=proxied.OPENAI_BASE,
                http=http or JsonHttp(cls.name, policy=policy, session=proxied.unix_session(path)),
                openai_itself=proxied.openai_itself(env),
            )
        base = settings.base_url(env, BASE_URL_VARIABLE, DEFAULT_BASE_URL)
        key = settings.api_key(env, KEY_VARIABLE, required=is_openai_itself(base))
        return cls(
            api_key=key,
            model=settings.model_name(env, model, DEFAULT_MODEL),
            base_url=base,
            http=http or JsonHttp(cls.name, policy=policy),
        )

    def __repr__(self) -> str:
        return f"OpenAIProvider(model={self.model!r}, base_url={self.base_url!r})"

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        headers = {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        body = request_body(
            self.model,
            system,
            messages,
            tools,
            max_tokens,
            openai_itself=self.openai_itself,
        )
        return parse_response(self._http.post(f"{self.base_url}/chat/completions", headers, body))
