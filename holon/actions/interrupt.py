"""The cleanup phase (`HOLON_PHASE=cleanup`): the composite runs it `if: always()` after the
main step. When the main step finished, it wrote its marker last and there is nothing to do.
Otherwise the job was cancelled, timed out or crashed mid-step: the skill runs it left
unfinished are settled as an interruption (the stop path: closure waiting on the operator,
lifecycle `userinterlude`), their comment becomes the handoff and their check run completes, so
no run ever ends silent; then the outputs, the summary and the state as in the main step.

The handoff says what happened: the step was cut short (no user stopped it), and what GitHub
holds of a publish it cut short, looked up (`publish_found`: the fix commit on the branch, the
review posted), so the operator restarts, or not, knowing what is already there.

Nothing is started here: no agent runs, no follow-up is decided (those left queued stay in the
state for the next run's recovery)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from holon.actions.conclude import conclude
from holon.actions.config import ActionConfig
from holon.actions.result import StepResult
from holon.actions.step import main_finished
from holon.closure.derive import CUT_SHORT
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.state.store import STATE

REASON = CUT_SHORT  # the closure of a cancelled workflow run's interruption says the same


def run_cleanup(
    env: Mapping[str, str],
    config: ActionConfig,
    *,
    clock: Callable[[], datetime],
    say: Callable[[str], None],
) -> StepResult | None:
    """The cleanup's result, or None when there is nothing to clean up (the main step
    finished, or never got as far as the state)."""
    if main_finished(config):
        say("holon action cleanup: the main step finished; nothing to settle")
        return None
    if not (config.state_dir / STATE).is_file():
        say("holon action cleanup: the main step left no state; nothing to settle")
        return None
    from holon.actions.single import build_step_serve, quiet_writes, step_policy

    envelope = _event(env, config, clock())
    policy = step_policy(config)
    serve = build_step_serve(env, config, policy, clock=clock, say=quiet_writes(say))
    _tell_cut_short(serve, policy.settings.publish.branch_template)
    serve.open(interrupted=REASON, actor=config.actor)
    serve.close()
    return conclude(serve, envelope, config, [REASON])


def _tell_cut_short(serve: Any, branch_template: str) -> None:
    """The serve's GitHub hooks settle the runs as cut short, looking up what GitHub holds of a
    publish each cut (through the serve's client, read-only; a solve's branch by the policy's
    `branch_template`)."""
    from holon.serve.github_hooks import CutShort, GitHubHooks

    hooks, client = serve.hooks, serve.context_client
    if not isinstance(hooks, GitHubHooks):
        return  # offline: nothing on GitHub to settle or look up
    if client is None:
        hooks.cut_short = CutShort(REASON)
        return
    from holon.github.publish_found import found_on_github

    login, workflow = hooks.scope.login, hooks.scope.workflow
    hooks.cut_short = CutShort(
        REASON, lambda intent: found_on_github(client, login, workflow, intent, branch_template)
    )


def _event(env: Mapping[str, str], config: ActionConfig, now: datetime) -> EventEnvelope | None:
    """The job's event, for the summary; the cleanup settles without it if it is unreadable."""
    from holon.actions.event import envelope_from_actions

    try:
        return envelope_from_actions(env, config, now)
    except InvalidInput:
        return None


__all__ = ["REASON", "run_cleanup"]
