"""A provider that answers with turns given in code: the model of tests, the evaluation harness
and hostile-corpus replays. Like `replay`, it ignores what it is sent; unlike it, the turns are
in memory. Past the last turn it raises ProviderError, as a session that ran out does."""

from __future__ import annotations

from collections.abc import Sequence

from holon.agent.conversation import Message, ModelTurn, ToolSpec
from holon.agent.providers.base import ProviderError


class ScriptedProvider:
    name = "scripted"

    def __init__(self, turns: Sequence[ModelTurn], model: str = "scripted") -> None:
        self.turns = list(turns)
        self.model = model
        self.requests: list[tuple[str, list[Message]]] = []  # what was sent, for assertions

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        self.requests.append((system, list(messages)))
        if len(self.requests) > len(self.turns):
            raise ProviderError(
                f"the script has {len(self.turns)} turns; request {len(self.requests)} has none"
            )
        return self.turns[len(self.requests) - 1]
