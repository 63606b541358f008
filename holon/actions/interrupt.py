"""The cleanup phase (`HOLON_PHASE=cleanup`), run `if: always()` after the main step."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from holon.actions.config import ActionConfig
from holon.actions.result import StepResult
from holon.actions.step import main_finished


def run_cleanup(
    env: Mapping[str, str],
    config: ActionConfig,
    *,
    clock: Callable[[], datetime],
    say: Callable[[str], None],
) -> StepResult:
    if main_finished(config):
        return StepResult(exit_code=0, notes=["the main step finished: nothing to clean up"])
    return StepResult(exit_code=0, notes=["cleanup is not built yet"])


__all__ = ["run_cleanup"]
