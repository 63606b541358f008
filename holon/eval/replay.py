"""A scenario's recorded model answer as the turns a scripted provider replays to the agent
decider. The answer is kept in a neutral shape (`{rationale, intents: [{type, args, target}]}`,
or `text` for a model that wrote prose instead of deciding) so scenarios do not change when the
decider's tool does: this one function is where the answer meets the tool's name and shape.
"""

from __future__ import annotations

from typing import Any

from holon.agent.conversation import ModelTurn, ToolCall, Usage
from holon.eval.scenario import Answer

# The one tool the agent decider asks for intents through (docs/controller-agent.md).
DECIDE_TOOL = "decide"
# A plausible size for one decision, so usage and cost reports have figures to show.
_USAGE = Usage(input_tokens=1200, output_tokens=120)


def tool_arguments(answer: Answer) -> dict[str, Any]:
    """The `decide` tool call's arguments."""
    intents: list[dict[str, Any]] = []
    for intent in answer.intents:
        entry: dict[str, Any] = {"type": intent.type, "args": dict(intent.args)}
        if intent.target is not None:
            entry["target"] = dict(intent.target)
        intents.append(entry)
    return {"rationale": answer.rationale, "intents": intents}


def turns_for(answer: Answer) -> list[ModelTurn]:
    """The model's turns: one `decide` call, or the prose of a model that did not decide."""
    if answer.text is not None and not answer.intents:
        return [ModelTurn(text=answer.text, stop_reason="end_turn", usage=_USAGE)]
    call = ToolCall(id="call_eval_1", name=DECIDE_TOOL, arguments=tool_arguments(answer))
    return [ModelTurn(text="", tool_calls=[call], stop_reason="tool_use", usage=_USAGE)]


__all__ = ["DECIDE_TOOL", "tool_arguments", "turns_for"]
