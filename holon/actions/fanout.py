"""Fan-out mode (owner: H3). A minimal stand-in: not built yet."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from holon.errors import InvalidInput

if TYPE_CHECKING:
    from holon.actions.config import ActionConfig
    from holon.actions.result import StepResult


def run_decide(
    env: Mapping[str, str], config: ActionConfig, clock: Callable[[], datetime]
) -> StepResult:
    raise InvalidInput("mode decide is not built yet")


def run_settle(
    env: Mapping[str, str], config: ActionConfig, clock: Callable[[], datetime]
) -> StepResult:
    raise InvalidInput("mode settle is not built yet")


__all__ = ["run_decide", "run_settle"]
