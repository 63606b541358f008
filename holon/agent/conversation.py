"""The provider-neutral conversation the built-in engine keeps: messages, tool calls, turns.

Providers translate these to and from their wire formats (Anthropic Messages, OpenAI Chat
Completions, a recorded session); the loop, the tools and the evidence only ever see these.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Usage(_Frozen):
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class ToolSpec(_Frozen):
    """A tool offered to the model: its name, what it does, its arguments as JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class ToolCall(_Frozen):
    """One tool call the model made. `arguments` is None when the model's arguments were not a
    JSON object; `raw_arguments` then keeps what it sent (bounded) so the error can say why."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str | None = None


StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


class ModelTurn(_Frozen):
    """What the model answered in one request."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: StopReason = "end_turn"
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None


class UserMessage(_Frozen):
    role: Literal["user"] = "user"
    text: str


class AssistantMessage(_Frozen):
    role: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolResultMessage(_Frozen):
    """The result of one tool call, sent back to the model."""

    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    text: str
    is_error: bool = False


Message = UserMessage | AssistantMessage | ToolResultMessage
