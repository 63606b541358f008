"""The end every mode's step shares: the state exported for upload, the step described, and its
exit code from the subject's closure (single, cleanup, fan-out's decide and settle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from holon.actions.config import ActionConfig
from holon.actions.result import StepResult, step_exit

if TYPE_CHECKING:
    from holon.gateway.envelope import EventEnvelope
    from holon.serve.serve import Serve

Describe = Callable[["Serve", "EventEnvelope | None", ActionConfig, list[str]], StepResult]


def conclude(
    serve: Serve,
    envelope: EventEnvelope | None,
    config: ActionConfig,
    notes: list[str],
    *,
    describe: Describe | None = None,
    fail_on_waiting: bool | None = None,
) -> StepResult:
    """Export the closed serve's state, describe the step (`describe`: single mode's unless
    given) and set its exit code (`fail_on_waiting`: the input's unless given)."""
    from holon.actions import state_sync

    exported = state_sync.export_state(config)
    if exported is not None:
        notes.append(f"state exported to {exported}")
    if describe is None:
        from holon.actions.step_report import describe as single

        result = single(serve, envelope, config, notes=notes)
    else:
        result = describe(serve, envelope, config, notes)
    waiting = config.fail_on_waiting if fail_on_waiting is None else fail_on_waiting
    result.exit_code = step_exit(
        result.closure, fail_on_waiting=waiting, failed=bool(serve.failed or result.problems)
    )
    return result


__all__ = ["conclude"]
