"""The one interface a model provider implements for the built-in engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from holon.agent.conversation import Message, ModelTurn, ToolSpec


class ProviderError(Exception):
    """A request the provider could not answer usefully; the message is one line, secret-free.

    `retryable` says whether sending the same request again could help (429/5xx, a dropped
    connection): the provider retries those itself before raising."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class MissingCredentials(ProviderError):
    """The provider's key is not in the environment: the agent fails fast, naming the variable."""


class Provider(Protocol):
    name: str
    model: str

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn: ...
