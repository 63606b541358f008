"""Prices: the most specific key of the policy's table wins; an unknown model is unpriced."""

from __future__ import annotations

import pytest

from holon.controller.memory import Spend
from holon.controller.policy import parse_policy
from holon.controller.pricing import pricer, spend_of
from holon.errors import InvalidInput
from holon.price import Price, cost_usd, price_for

TABLE = {
    "*": Price(input_per_mtok=100, output_per_mtok=100),
    "claude-*": Price(input_per_mtok=3, output_per_mtok=15),
    "claude-haiku-*": Price(input_per_mtok=1, output_per_mtok=5),
    "gpt-4o": Price(input_per_mtok=2.5, output_per_mtok=10),
    "gpt-4o*": Price(input_per_mtok=50, output_per_mtok=50),
}


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("gpt-4o", "gpt-4o"),  # the exact name beats a glob that also matches
        ("gpt-4o-mini", "gpt-4o*"),
        ("claude-haiku-4-5", "claude-haiku-*"),  # more literal characters: more specific
        ("claude-sonnet-4-5", "claude-*"),
        ("llama-3", "*"),
    ],
)
def test_the_most_specific_key_prices_the_model(model: str, key: str) -> None:
    assert price_for(model, TABLE) is TABLE[key]


def test_a_model_no_key_matches_has_no_price() -> None:
    table = {k: v for k, v in TABLE.items() if k != "*"}
    assert price_for("llama-3", table) is None
    assert price_for(None, table) is None
    assert price_for("", table) is None
    # Globs match whole names, case-sensitively: a prefix is not a match.
    assert price_for("my-claude-x", {"claude-*": TABLE["claude-*"]}) is None


def test_spend_of_prices_known_models_and_never_reads_unknown_ones_as_free() -> None:
    priced = spend_of(1_000_000, 200_000, "claude-sonnet-4-5", TABLE)
    assert priced == Spend(input_tokens=1_000_000, output_tokens=200_000, cost_usd=6.0)
    unknown = spend_of(1_000, 500, "llama-3", {"claude-*": TABLE["claude-*"]})
    assert unknown == Spend(input_tokens=1_000, output_tokens=500, unpriced_tokens=1_500)
    assert unknown.cost_usd == 0
    assert unknown.tokens == 1_500
    assert pricer(TABLE)(10, 20, "gpt-4o") == spend_of(10, 20, "gpt-4o", TABLE)


def test_costs_are_rounded_to_a_millionth_of_a_dollar() -> None:
    assert cost_usd(1, 1, Price(input_per_mtok=3, output_per_mtok=15)) == 0.000018
    assert cost_usd(0, 0, Price(input_per_mtok=3, output_per_mtok=15)) == 0.0


def test_the_policy_carries_budgets_and_prices() -> None:
    policy = parse_policy(
        "version: 1\n"
        "settings:\n"
        "  budgets: {subject_tokens: 400000, day_cost_usd: 25}\n"
        "  prices:\n"
        '    "claude-sonnet-*": {input_per_mtok: 3, output_per_mtok: 15}\n'
    )
    budgets = policy.settings.budgets
    assert (budgets.subject_tokens, budgets.day_cost_usd, budgets.run_tokens) == (400000, 25, None)
    assert policy.settings.prices["claude-sonnet-*"].output_per_mtok == 15


def test_the_defaults_are_unlimited_with_no_price_table() -> None:
    settings = parse_policy("version: 1\n").settings
    assert settings.prices == {}
    assert all(value is None for value in settings.budgets.model_dump().values())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("  budgets: {day_tokens: -1}\n", "settings.budgets.day_tokens"),
        ("  budgets: {month_tokens: 5}\n", "settings.budgets.month_tokens"),
        ('  prices: {"x": {input_per_mtok: -1, output_per_mtok: 1}}\n', "settings.prices.x"),
        ('  prices: {"x": {input_per_mtok: 1}}\n', "output_per_mtok"),
    ],
)
def test_bad_budgets_and_prices_are_one_line_naming_where(text: str, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_policy("version: 1\nsettings:\n" + text, "policy.yaml")
    assert message in str(caught.value)
    assert str(caught.value).startswith("policy.yaml line 3: ")
    assert "\n" not in str(caught.value)
