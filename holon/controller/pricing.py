"""What tokens cost at the policy's price table (docs/budgets.md). Pure.

`spend_of` turns a model's token counts into a `Spend`: priced when the table prices the model
(`holon/price.py` says which key matches), else every token unpriced, so an unknown
price is never read as free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from holon.price import Price, cost_usd, price_for
from holon.spend import Spend


def spend_of(
    input_tokens: int, output_tokens: int, model: str | None, prices: Mapping[str, Price]
) -> Spend:
    price = price_for(model, prices)
    if price is None:
        return Spend(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            unpriced_tokens=input_tokens + output_tokens,
        )
    return Spend(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost_usd(input_tokens, output_tokens, price),
    )


def pricer(prices: Mapping[str, Price]) -> Callable[[int, int, str | None], Spend]:
    """`spend_of` at `prices`: what the executor applies to a run's usage."""
    table = dict(prices)
    return lambda input_tokens, output_tokens, model: spend_of(
        input_tokens, output_tokens, model, table
    )


__all__ = ["pricer", "spend_of"]
