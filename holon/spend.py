"""What model work cost: tokens and dollars. A part of its own because runs (the executor's
results), the subject memory (the controller) and budgets all count in it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Spend(BaseModel):
    """Tokens and their cost. `cost_usd` counts only priced tokens; tokens of a model the price
    table does not name are `unpriced_tokens`, so an unknown price is never read as free."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0)
    unpriced_tokens: int = Field(default=0, ge=0)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 6),
            unpriced_tokens=self.unpriced_tokens + other.unpriced_tokens,
        )


__all__ = ["Spend"]
