"""Whether a new run may start: the subject's lifetime spend and the day's against the policy's
limits; a limit reached names itself, the figure, and how to continue (pure tables)."""

from __future__ import annotations

import pytest

from holon.controller.budget import (
    command_for,
    decider_allowed,
    figure,
    limited,
    may_start,
    run_constraints,
)
from holon.controller.memory import Spend
from holon.controller.policy import Budgets, parse_policy

DAY = "2026-11-21"


def spent(tokens: int = 0, cost: float = 0.0, unpriced: int = 0) -> Spend:
    return Spend(input_tokens=tokens, cost_usd=cost, unpriced_tokens=unpriced)


# (budgets, subject spend, day spend) -> the limit reached (None: may start)
CASES = [
    (Budgets(), spent(10**9, 10**4), spent(10**9, 10**4), None),
    (Budgets(subject_tokens=400_000), spent(399_999), spent(), None),
    (Budgets(subject_tokens=400_000), spent(400_000), spent(), "subject_tokens"),
    (Budgets(subject_cost_usd=3.0), spent(1, 2.99), spent(), None),
    (Budgets(subject_cost_usd=3.0), spent(1, 3.12), spent(), "subject_cost_usd"),
    # Unpriced tokens count against token limits only: their cost is not known.
    (Budgets(subject_cost_usd=3.0), spent(10**7, 0.0, 10**7), spent(), None),
    (Budgets(day_tokens=1_000_000), spent(), spent(1_000_001), "day_tokens"),
    (Budgets(day_cost_usd=25.0), spent(), spent(5, 25.0), "day_cost_usd"),
    # The subject's limit is named first: raising the day's would not let it start.
    (Budgets(subject_tokens=1, day_tokens=1), spent(5), spent(5), "subject_tokens"),
    (Budgets(subject_tokens=0), spent(), spent(), "subject_tokens"),
]


@pytest.mark.parametrize(("budgets", "subject", "day", "limit"), CASES)
def test_may_start(budgets: Budgets, subject: Spend, day: Spend, limit: str | None) -> None:
    found = may_start(budgets, subject="issue:7", subject_spend=subject, day=DAY, day_spend=day)
    assert (found.limit if found else None) == limit


def test_the_subject_line_has_the_figure_and_how_to_continue() -> None:
    found = may_start(
        Budgets(subject_tokens=400_000, subject_cost_usd=3.0),
        subject="issue:7",
        subject_spend=Spend(input_tokens=400_000, output_tokens=12_000, cost_usd=3.12),
        day=DAY,
        day_spend=Spend(),
        skill="github-pr-fix",
    )
    assert found is not None
    assert found.scope == "subject"
    assert found.figure == "issue:7 spent 412,000 of 400,000 tokens ($3.12 of $3.00)"
    assert found.line == (
        "issue:7 spent 412,000 of 400,000 tokens ($3.12 of $3.00): raise "
        "`settings.budgets.subject_tokens` in the policy, then comment `/holon fix` to continue"
    )


def test_the_day_line_says_when_the_day_ends() -> None:
    found = may_start(
        Budgets(day_cost_usd=25.0),
        subject="issue:7",
        subject_spend=Spend(),
        day=DAY,
        day_spend=Spend(input_tokens=900, output_tokens=100, cost_usd=25.5, unpriced_tokens=40),
        mention="bot",
    )
    assert found is not None
    assert (found.scope, found.limit) == ("day", "day_cost_usd")
    assert found.line == (
        "the repository spent 1,000 tokens ($25.50 of $25.00, 40 tokens unpriced) on "
        "2026-11-21 (UTC): wait for 2026-11-22 UTC or raise `settings.budgets.day_cost_usd` in "
        "the policy, then comment `/bot solve` to continue"
    )


def test_a_decider_may_ask_the_day_budget_before_calling_its_model() -> None:
    assert decider_allowed(Budgets(day_tokens=10), DAY, spent(9)) is None
    found = decider_allowed(Budgets(day_tokens=10), DAY, spent(10))
    assert found is not None
    assert found.limit == "day_tokens"


def test_figures_and_commands() -> None:
    assert figure(Spend(input_tokens=1234, cost_usd=0.5), None, None) == "1,234 tokens ($0.50)"
    assert command_for("github-review") == "review"
    assert command_for(None) == "solve"
    assert not limited(Budgets(run_tokens=5, run_cost_usd=1))
    assert limited(Budgets(day_cost_usd=1))


def test_run_constraints_carry_the_run_limits_and_prices_only_when_a_cost_needs_them() -> None:
    settings = parse_policy(
        "version: 1\nsettings:\n  budgets: {run_tokens: 50000}\n"
        "  prices: {'m-*': {input_per_mtok: 1, output_per_mtok: 2}}\n"
    ).settings
    assert run_constraints(settings) == {"max_tokens": 50000}
    costly = settings.model_copy(update={"budgets": Budgets(run_cost_usd=0.5)})
    assert run_constraints(costly) == {
        "max_cost_usd": 0.5,
        "prices": {"m-*": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
    }
    assert run_constraints(parse_policy("version: 1\n").settings) == {}
