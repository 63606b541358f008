"""The result every GitHub effect returns to the executor, whichever module performs it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EffectOutcome:
    """`performed`: this call changed something on GitHub (False when it was already done or
    skipped); `output`: what it produced (numbers, shas, URLs); `note`: why, in one line;
    `wait`: what the effect now waits on, if anything."""

    performed: bool
    output: dict[str, Any]
    note: str = ""
    wait: str | None = None
