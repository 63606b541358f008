"""Budgets as closure (docs/budgets.md): whether new model work may start. Pure.

Before a skill run starts, the subject's lifetime spend (its memory record) and the day's spend
across the repository (the `spend` records of that UTC day) are measured against the policy's
`settings.budgets`. A limit reached is not a failure: the work waits on the operator, and the
line says which limit, the figure, and how to continue. A run's own limits travel in its spec
(`run_constraints`) and stop the engine the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal

from holon.controller.policy import Budgets, Settings
from holon.spend import Spend

Scope = Literal["subject", "day"]
# The command that asks for a skill's work again (stops.RESTARTING).
_COMMAND = {"github-issue-solve": "solve", "github-pr-fix": "fix", "github-review": "review"}


@dataclass(frozen=True)
class Reached:
    """A limit reached: which (`settings.budgets.<limit>`), the figure, how to continue."""

    scope: Scope
    limit: str
    figure: str
    how: str

    @property
    def line(self) -> str:
        return f"{self.figure}: {self.how}"


def command_for(skill: str | None) -> str:
    return _COMMAND.get(skill or "", "solve")


def dollars(value: float) -> str:
    return f"${value:,.2f}"


def figure(spend: Spend, tokens: int | None, cost: float | None) -> str:
    """`412,000 of 400,000 tokens ($3.12 of $3.00)`: the spend against its limits."""
    used = (
        f"{spend.tokens:,} of {tokens:,} tokens"
        if tokens is not None
        else f"{spend.tokens:,} tokens"
    )
    money = dollars(spend.cost_usd) + (f" of {dollars(cost)}" if cost is not None else "")
    unpriced = f", {spend.unpriced_tokens:,} tokens unpriced" if spend.unpriced_tokens else ""
    return f"{used} ({money}{unpriced})"


def _reached(spend: Spend, tokens: int | None, cost: float | None, name: str) -> str | None:
    """The settings key of the limit `spend` has reached, or None. Reached means no more is
    left: a run started at the limit would only exceed it."""
    if tokens is not None and spend.tokens >= tokens:
        return f"{name}_tokens"
    if cost is not None and spend.cost_usd >= cost:
        return f"{name}_cost_usd"
    return None


def _continue(mention: str, command: str) -> str:
    return f"then comment `/{mention} {command}` to continue"


def day_reached(
    budgets: Budgets, day: str, day_spend: Spend, *, mention: str = "holon", command: str = "solve"
) -> Reached | None:
    """The day's limit reached (`day`: the UTC date `YYYY-MM-DD`), or None."""
    limit = _reached(day_spend, budgets.day_tokens, budgets.day_cost_usd, "day")
    if limit is None:
        return None
    tomorrow = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    return Reached(
        "day",
        limit,
        f"the repository spent {figure(day_spend, budgets.day_tokens, budgets.day_cost_usd)} "
        f"on {day} (UTC)",
        f"wait for {tomorrow} UTC or raise `settings.budgets.{limit}` in the policy, "
        + _continue(mention, command),
    )


def subject_reached(
    budgets: Budgets,
    subject: str,
    spend: Spend,
    *,
    mention: str = "holon",
    command: str = "solve",
) -> Reached | None:
    """The subject's lifetime limit reached, or None."""
    limit = _reached(spend, budgets.subject_tokens, budgets.subject_cost_usd, "subject")
    if limit is None:
        return None
    return Reached(
        "subject",
        limit,
        f"{subject} spent {figure(spend, budgets.subject_tokens, budgets.subject_cost_usd)}",
        f"raise `settings.budgets.{limit}` in the policy, " + _continue(mention, command),
    )


def may_start(
    budgets: Budgets,
    *,
    subject: str,
    subject_spend: Spend,
    day: str,
    day_spend: Spend,
    skill: str | None = None,
    mention: str = "holon",
) -> Reached | None:
    """Whether a new run on `subject` may start: None, or the limit that stops it (the
    subject's first: raising the day's would not help it)."""
    command = command_for(skill)
    return subject_reached(
        budgets, subject, subject_spend, mention=mention, command=command
    ) or day_reached(budgets, day, day_spend, mention=mention, command=command)


def decider_allowed(
    budgets: Budgets, day: str, day_spend: Spend, *, mention: str = "holon"
) -> Reached | None:
    """For a decider that calls a model: None when the day's budget leaves room for the call,
    else the limit reached (the decider then leaves the deciding to the policy decider)."""
    return day_reached(budgets, day, day_spend, mention=mention)


def limited(budgets: Budgets) -> bool:
    """Whether any subject or day limit is set (else nothing needs measuring)."""
    return any(
        value is not None
        for value in (
            budgets.subject_tokens,
            budgets.subject_cost_usd,
            budgets.day_tokens,
            budgets.day_cost_usd,
        )
    )


def run_constraints(settings: Settings) -> dict[str, Any]:
    """The spec constraints a skill run gets from the policy: its token and cost limits, and
    the prices its cost is counted at (only when a cost limit needs them)."""
    budgets = settings.budgets
    found: dict[str, Any] = {}
    if budgets.run_tokens is not None:
        found["max_tokens"] = budgets.run_tokens
    if budgets.run_cost_usd is not None:
        found["max_cost_usd"] = budgets.run_cost_usd
        found["prices"] = {k: v.model_dump() for k, v in settings.prices.items()}
    return found


__all__ = [
    "Reached",
    "command_for",
    "day_reached",
    "decider_allowed",
    "dollars",
    "figure",
    "limited",
    "may_start",
    "run_constraints",
    "subject_reached",
]
