"""Model prices, and the cost of tokens at them (docs/budgets.md). Pure.

A price table maps a model name, or an `fnmatch` glob of names (`claude-sonnet-*`), to what a
million input and a million output tokens cost in US dollars. It lives in the policy
(`settings.prices`) and travels to the agent in the spec (`constraints.prices`) so the builtin
engine can stop at a run's cost limit. The most specific key wins: the exact name, else the
matching glob with the most literal characters (ties: the longer key, then the first in order).
A model no key matches has no price: its tokens are reported as unpriced, never as free.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from pydantic import BaseModel, ConfigDict, Field

MAX_PRICES = 200  # keys in one table: a page of configuration, not a catalogue
_GLOB = "*?["
# A price far beyond any model's is a typo; bounded so costs stay finite.
MAX_PER_MTOK = 100_000.0


class Price(BaseModel):
    """What one million tokens cost, in US dollars."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0, le=MAX_PER_MTOK, description="USD per 1M input tokens")
    output_per_mtok: float = Field(ge=0, le=MAX_PER_MTOK, description="USD per 1M output tokens")


def _literal(key: str) -> int:
    return sum(1 for char in key if char not in _GLOB)


def price_for(model: str | None, prices: Mapping[str, Price]) -> Price | None:
    """The price of `model` in `prices` (see the module docstring), or None."""
    if not model:
        return None
    exact = prices.get(model)
    if exact is not None:
        return exact
    best: tuple[int, int] | None = None
    found: Price | None = None
    for key, price in prices.items():
        if not any(char in key for char in _GLOB) or not fnmatchcase(model, key):
            continue
        rank = (_literal(key), len(key))
        if best is None or rank > best:
            best, found = rank, price
    return found


def cost_usd(input_tokens: int, output_tokens: int, price: Price) -> float:
    """The cost of the tokens at `price`, rounded to a millionth of a dollar."""
    cost = input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok
    return round(cost / 1_000_000, 6)


__all__ = ["MAX_PRICES", "Price", "cost_usd", "price_for"]
