"""The `builtin` engine: a small tool-use loop over a model provider, with a linear history.

In the style of mini-swe-agent: the system and user prompts, then one request per turn; the tool
calls of a turn run in order and their results are appended; the loop ends when the model calls
`finish`. Everything else that ends it is a stop the manifest reports as such, never a success:
the turn budget (`max_steps`), the deadline (`timeout`), the token and cost budgets
(`token_budget`, `cost_budget`: the run waits on the operator, docs/budgets.md), a
refusal (`refused`), a provider failure after its own retries (`error`), and a model that keeps
answering without a tool call after being reminded (`no_finish`).

Evidence goes to the Recorder as it happens (each turn, each tool call and result, usage); the
loop keeps only the history the model needs, and tool results in it are bounded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import holon
from holon.agent.conversation import (
    AssistantMessage,
    Message,
    ModelTurn,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from holon.agent.engine import EngineResult, EngineTask, Finish, Recorder, Stop
from holon.agent.hygiene import make_non_dumpable
from holon.agent.providers.base import Provider, ProviderError
from holon.agent.tools import Toolbox, ToolOutcome
from holon.price import Price, cost_usd, price_for
from holon.templating import render

MAX_NUDGES = 2  # reminders to call a tool before the loop stops with no_finish
_ONE_LINE = 300


class BuiltinEngine:
    def __init__(
        self,
        provider: Provider,
        name: str = "builtin",
        *,
        max_nudges: int = MAX_NUDGES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.provider = provider
        self.name = name
        self.max_nudges = max_nudges
        self.clock = clock

    def missing(self) -> str | None:
        check = getattr(self.provider, "missing", None)
        if callable(check):
            found = check()
            return None if found is None else str(found)
        return None

    def run(self, task: EngineTask, recorder: Recorder) -> EngineResult:
        # Commands run as this process's user: keep its environment (the model's key) out of
        # their reach through /proc.
        make_non_dumpable()
        return _Loop(self, task, recorder).run()


class _Loop:
    def __init__(self, engine: BuiltinEngine, task: EngineTask, recorder: Recorder) -> None:
        self.engine = engine
        self.provider = engine.provider
        self.task = task
        self.recorder = recorder
        self.clock = engine.clock
        self.tools = Toolbox(task, recorder, clock=engine.clock)
        self.messages: list[Message] = [UserMessage(text=task.user)]
        self.usage = Usage()
        self.last_input = 0  # input tokens of the last request (the next sends at least these)
        self.turns = 0
        self.model: str | None = getattr(self.provider, "model", None) or None

    def note(self, kind: str, **fields: Any) -> None:
        self.recorder.transcript({"engine": self.engine.name, "kind": kind, **fields})

    def run(self) -> EngineResult:
        budgets = self.task.budgets
        self.note(
            "start",
            provider=getattr(self.provider, "name", None),
            model=self.model,
            tools=[spec.name for spec in self.tools.specs],
            max_turns=budgets.max_turns,
            max_tokens=budgets.max_tokens,
            max_cost_usd=budgets.max_cost_usd,
        )
        self.note("prompt", system=self.task.system, user=self.task.user)
        nudges = 0
        while True:
            stop = self._budget_stop()
            if stop is not None:
                return self._end(stop[0], stop[1])
            try:
                turn = self.provider.complete(
                    self.task.system,
                    self.messages,
                    self.tools.specs,
                    max_tokens=self._request_tokens(),
                )
            except ProviderError as exc:
                error = _one_line(str(exc)) or type(exc).__name__
                self.note("provider_error", turn=self.turns + 1, error=error)
                return self._end("error", f"the provider failed: {error}")
            self._take(turn)
            if turn.stop_reason == "refusal":
                return self._end("refused", _refusal(turn.text))
            self.messages.append(AssistantMessage(text=turn.text, tool_calls=turn.tool_calls))
            if not turn.tool_calls:
                if nudges >= self.engine.max_nudges:
                    return self._end("no_finish", "the model stopped without calling finish")
                nudges += 1
                self._nudge(self.engine.max_nudges - nudges, turn)
                continue
            nudges = 0
            finish = self._run_calls(turn.tool_calls)
            if finish is not None:
                return self._end("finished", None, finish)

    def _budget_stop(self) -> tuple[Stop, str] | None:
        budgets = self.task.budgets
        if budgets.deadline is not None and self.clock() >= budgets.deadline:
            return "timeout", "the run's deadline passed"
        if budgets.max_tokens is not None and self.usage.total >= budgets.max_tokens:
            return "token_budget", (
                f"the run spent {self.usage.total:,} of {budgets.max_tokens:,} tokens"
                + self._cost_note()
            )
        price = self._price()
        if budgets.max_cost_usd is not None and price is not None:
            spent = self._cost(price)
            # The next request sends at least the history the last one sent: stop before it
            # if that alone would cross the limit, not after.
            after = spent + cost_usd(self.last_input, 0, price)
            if spent >= budgets.max_cost_usd or (self.turns and after > budgets.max_cost_usd):
                ahead = "" if spent >= budgets.max_cost_usd else "; its next request would pass it"
                return "cost_budget", (
                    f"the run spent ${spent:,.2f} of ${budgets.max_cost_usd:,.2f} "
                    f"({self.usage.total:,} tokens){ahead}"
                )
        if self.turns >= budgets.max_turns:
            return "max_steps", f"the turn budget ran out ({budgets.max_turns} model requests)"
        return None

    def _request_tokens(self) -> int:
        budgets = self.task.budgets
        cap = budgets.max_output_tokens
        if budgets.max_tokens is not None:
            cap = min(cap, max(budgets.max_tokens - self.usage.total, 1))
        price = self._price()
        if budgets.max_cost_usd is not None and price is not None and price.output_per_mtok:
            left = budgets.max_cost_usd - self._cost(price) - cost_usd(self.last_input, 0, price)
            cap = min(cap, max(int(left * 1_000_000 / price.output_per_mtok), 1))
        return cap

    def _price(self) -> Price | None:
        return price_for(self.model, self.task.budgets.prices)

    def _cost(self, price: Price) -> float:
        return cost_usd(self.usage.input_tokens, self.usage.output_tokens, price)

    def _cost_note(self) -> str:
        price = self._price()
        return f" (${self._cost(price):,.2f})" if price is not None else ""

    def _take(self, turn: ModelTurn) -> None:
        self.turns += 1
        self.usage = self.usage + turn.usage
        self.last_input = turn.usage.input_tokens
        self.recorder.usage(turn.usage)
        if turn.model:
            self.model = turn.model
        self.note(
            "turn",
            turn=self.turns,
            text=turn.text,
            tool_calls=[call.model_dump(exclude_none=True) for call in turn.tool_calls],
            stop_reason=turn.stop_reason,
            usage=turn.usage.model_dump(),
            model=turn.model,
        )

    def _nudge(self, left: int, turn: ModelTurn) -> None:
        text = render("holon.agent.engines", "builtin_nudge.txt.j2", "text", left=left)
        self.note("nudge", turn=self.turns, stop_reason=turn.stop_reason, text=text)
        self.messages.append(UserMessage(text=text))

    def _run_calls(self, calls: list[ToolCall]) -> Finish | None:
        for call in calls:
            outcome = self.tools.execute(call)
            self.note(
                "tool_result",
                turn=self.turns,
                call_id=call.id,
                name=call.name,
                is_error=outcome.is_error,
                command_id=outcome.command_id,
                text=outcome.text,
            )
            if outcome.finish is not None:
                return outcome.finish
            self.messages.append(_result(call, outcome))
        return None

    def _end(self, stop: Stop, error: str | None, finish: Finish | None = None) -> EngineResult:
        self.note(
            "stop",
            stop=stop,
            error=error,
            turns=self.turns,
            usage=self.usage.model_dump(),
        )
        return EngineResult(
            stop=stop,
            finish=finish,
            error=error,
            usage=self.usage,
            turns=self.turns,
            model=self.model,
            engine_version=f"holon {holon.__version__}",
        )


def _result(call: ToolCall, outcome: ToolOutcome) -> ToolResultMessage:
    return ToolResultMessage(
        call_id=call.id, name=call.name, text=outcome.text, is_error=outcome.is_error
    )


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _ONE_LINE else line[: _ONE_LINE - 3] + "..."


def _refusal(text: str) -> str:
    said = _one_line(text)
    return f"the provider refused: {said}" if said else "the provider refused"
