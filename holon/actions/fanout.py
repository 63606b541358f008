"""Fan-out mode: the fork-safe two-phase design (docs/fan-out.md).

- `run_decide` (job `decide`, trusted, with the token): the event handled as in single mode,
  except that every agent skill run is handed on (`DeferHandler`): bundled for a run job, left
  inflight, journaled as deferred. Outputs `matrix` and `has_runs`; the state goes to the
  settle job (`decided.py`).
- the run jobs (`holon run --bundle`, untrusted work in the agent image, no write token) are
  not here: they only run an agent and upload its output.
- `run_settle` (job `settle`, `if: always()`, trusted): starts from decide's state, takes the
  downloaded run outputs in (`run_intake.py`), and the serve's recovery settles each deferred
  run with `CollectHandler` (checked against the skill's declared artifacts; absent: failed),
  never running an agent; then publishing, the handoff comment, the check run, the conclusion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holon.actions.conclude import conclude
from holon.actions.config import ActionConfig
from holon.actions.result import Line, RunRow, StepResult
from holon.errors import InvalidInput

if TYPE_CHECKING:
    from holon.controller.pass_report import PassReport
    from holon.controller.policy import Policy
    from holon.executor.handlers import Handler
    from holon.gateway.envelope import EventEnvelope
    from holon.serve.serve import Serve

MATRIX_ENV = "HOLON_MATRIX"


def _say(text: str) -> None:
    from holon.terminal import line

    print(line(text), flush=True)


def _warn(text: str) -> None:
    from holon.actions.step import warning

    _say(warning(text))


class _Finder:
    """The serve's event lookup for the run's context, bound once the serve exists (its
    recovery may bundle a run while it opens)."""

    def __init__(self) -> None:
        self.serve: Serve | None = None

    def __call__(self, event_id: str) -> EventEnvelope | None:
        return self.serve.event_by_id(event_id) if self.serve is not None else None

    def deferral(self, intent_id: str) -> Mapping[str, Any] | None:
        """What the intent's record says of an earlier deferral (None: none)."""
        record = self.serve.state.get("intent", intent_id) if self.serve is not None else None
        deferred = record.data.get("deferred") if record is not None else None
        return deferred if isinstance(deferred, dict) else None


def run_decide(
    env: Mapping[str, str], config: ActionConfig, clock: Callable[[], datetime]
) -> StepResult:
    from holon.actions import state_sync
    from holon.actions.decided import decided_dir, hand_over
    from holon.actions.defer import DeferHandler
    from holon.actions.event import envelope_from_actions
    from holon.actions.matrix import matrix_json
    from holon.actions.single import (
        _client,
        build_step_serve,
        handle_with_tick,
        refuse_fork_head,
        step_policy,
    )
    from holon.controller.budget import run_constraints
    from holon.fsutil import remove_tree
    from holon.serve.context import EventContext
    from holon.skills.catalog import default_catalog, host_skills

    envelope = envelope_from_actions(env, config, clock())
    config = config.with_event(envelope.payload)
    refuse_fork_head(config, envelope)
    client = _client(env, config)
    restored = state_sync.restore_state(config, client=client, warn=_warn)
    policy = step_policy(config)
    bundles = bundle_dir_of(config)
    if bundles.is_dir() and not bundles.is_symlink():
        remove_tree(bundles)  # this pass's bundles only: each is uploaded for its run job
    bundles.mkdir(parents=True, exist_ok=True)
    catalog = default_catalog()
    finder = _Finder()
    context = EventContext(finder)
    defer = DeferHandler(
        bundle_root=bundles,
        clock=clock,
        describe=lambda name: found.description if (found := catalog.get(name)) else name,
        catalog=catalog,
        env=config.agent_env(),  # settings only: model keys reach the run job as its secrets
        context=context,
        host=host_skills(catalog),
        base_sha=env.get("GITHUB_SHA", "").strip() or None,
        by=f"{config.run_id}-{config.run_attempt or 1}" if config.run_id else None,
        prior=finder.deferral,
        constraints=run_constraints(policy.settings),
    )
    serve = build_step_serve(env, config, policy, clock=clock, say=_say, run_skill=defer)
    finder.serve = serve
    context.client = serve.context_client  # the edge's client reads the context, as in single
    notes = _restored_notes(restored)
    serve.open()
    try:
        serve.handle_follow_ups()
        # A tick reconciles as single mode does (its code path): what a dropped run missed is
        # decided here, its runs deferred like the event's own.
        notes += handle_with_tick(serve, envelope, env, config, client, clock, _warn)
    finally:
        serve.close()
    handed = hand_over(config.state_dir, decided_dir(env, config.state_dir))
    notes.append(f"state handed to settle: {', '.join(handed) or 'nothing'}")
    # Waiting on its own run jobs is what a decide job leaves by design: fail_on_waiting is
    # the settle job's to apply.
    result = conclude(serve, envelope, config, notes, describe=_describe, fail_on_waiting=False)
    for run in defer.overflow:
        result.notes.append(f"run {run} left inflight for the next pass: the matrix was full")
    result.extra_outputs = {
        "matrix": matrix_json(defer.entries),
        "has_runs": "true" if defer.entries else "false",
    }
    return result


def run_settle(
    env: Mapping[str, str], config: ActionConfig, clock: Callable[[], datetime]
) -> StepResult:
    from holon.actions import state_sync
    from holon.actions.collect import CollectHandler
    from holon.actions.decided import decided_dir, take_over
    from holon.actions.event import envelope_from_actions
    from holon.actions.matrix import matrix_runs
    from holon.actions.run_intake import take_run_outputs
    from holon.actions.single import _client, _reactivate, build_step_serve, step_policy
    from holon.controller.pricing import pricer
    from holon.serve.runs import runs_dir_of
    from holon.skills.catalog import default_catalog
    from holon.state.store import STATE

    envelope = envelope_from_actions(env, config, clock())
    config = config.with_event(envelope.payload)
    try:
        expected = matrix_runs(env.get(MATRIX_ENV))
    except ValueError as exc:
        raise InvalidInput(f"{MATRIX_ENV}: {exc}") from None
    config.state_dir.mkdir(parents=True, exist_ok=True)
    fresh = not (config.state_dir / STATE).exists() and not (config.state_dir / STATE).is_symlink()
    taken = take_over(decided_dir(env, config.state_dir), config.state_dir)
    notes = [f"state taken from decide: {', '.join(taken)}"] if taken else []
    client = _client(env, config)
    notes += _restored_notes(state_sync.restore_state(config, client=client, warn=_warn))
    policy = step_policy(config)
    if fresh and STATE not in taken:
        return _settle_without_decisions(env, config, clock, envelope, policy, notes)
    runs_dir = runs_dir_of(config.state_dir, config.runs_dir)
    # Only runs still handed on: a re-run of settle whose first attempt collected a run (its
    # saved state restored) takes that run's artifact no second time.
    waiting = deferred_runs(config.state_dir)
    wanted = waiting if expected is None else expected & waiting
    intake = take_run_outputs(
        config.run_outputs, runs_dir, wanted, attempt=config.run_attempt or "1"
    )
    notes += [f"run output taken: {run}" for run in intake.taken]
    notes += [f"run output ignored: {line}" for line in intake.ignored]
    collect = CollectHandler(
        runs_dir=runs_dir,
        clock=clock,
        catalog=default_catalog(),
        expected=expected,
        refused=intake.refused,
        base_sha=env.get("GITHUB_SHA", "").strip() or None,
        price=pricer(policy.settings.prices),
    )
    serve = build_step_serve(env, config, policy, clock=clock, say=_say, run_skill=collect)
    _unannounced(serve)
    serve.open()  # its recovery collects every deferred run (CollectHandler)
    try:
        serve.handle_follow_ups()  # publishing what succeeded
        # Re-activation happens here only: decide leaves its runs waiting on their jobs.
        notes += _reactivate(serve, config, clock())
    finally:
        serve.close()
    result = conclude(serve, envelope, config, notes, describe=_describe)
    for run, why in intake.refused.items():
        result.refused.append(Line(f"run output {run}", why))
    if not result.runs:
        result.notes.append("no deferred run to settle: the decide job left none")
    return result


def _settle_without_decisions(
    env: Mapping[str, str],
    config: ActionConfig,
    clock: Callable[[], datetime],
    envelope: EventEnvelope,
    policy: Policy,
    notes: list[str],
) -> StepResult:
    """No decided state reached this job (decide failed, was cancelled, timed out or lost its
    runner): the event decided again and each of its runs settled at once, never run
    (`died.py`); the comment decide may have started becomes the handoff."""
    from holon.actions.died import CANCELLED, DECIDE_RESULT_ENV, DiedHandler
    from holon.actions.single import build_step_serve

    decided = env.get(DECIDE_RESULT_ENV, "").strip()
    cancelled = decided == "cancelled"
    notes.append(
        f"the decide job's state never reached this job (decide: {decided[:40] or 'unknown'}): "
        "the event is decided again, and its runs settled without running"
    )
    handler = DiedHandler(event_id=envelope.id, clock=clock, cancelled=cancelled)
    serve = build_step_serve(env, config, policy, clock=clock, say=_say, run_skill=handler)
    _unannounced(serve)
    serve.open()
    try:
        serve.handle(envelope)
        if handler.handed and serve.controller is not None:
            # The user's cancellation, as the cleanup phase settles it; only this event's runs.
            report = serve.controller.interrupt(CANCELLED, config.actor, only=handler.handed)
            serve._account(report)
    finally:
        serve.close()
    result = conclude(serve, envelope, config, notes, describe=_describe)
    return result


class _Unannounced:
    """The serve's GitHub hooks in settle, less the announcement: decide announced the runs
    (the progress comment, the check run in progress) and settle only settles them, so a
    pull request's check run never goes back to in progress, and no list call is spent."""

    def __init__(self, hooks: Any) -> None:
        self._hooks = hooks

    def before_pass(self) -> None:
        self._hooks.before_pass()

    def wrap_run_skill(self, handler: Handler) -> Handler:
        return handler

    def after_pass(self, report: PassReport) -> None:
        self._hooks.after_pass(report)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hooks, name)  # scope, settled, failed_writes


def _unannounced(serve: Serve) -> None:
    if serve.hooks is not None:
        serve.hooks = _Unannounced(serve.hooks)


def deferred_runs(state_dir: Path) -> frozenset[str]:
    """The runs (`<intent>-<attempt>`) the state at `state_dir` still has handed on: inflight
    intents with a deferral; what settle may collect."""
    from holon.state.store import StateStore

    found = set()
    for record in StateStore(state_dir).load().live("intent"):
        deferred = record.data.get("deferred")
        run = deferred.get("run") if isinstance(deferred, dict) else None
        if record.status == "inflight" and isinstance(run, str):
            found.add(run)
    return frozenset(found)


def _restored_notes(restored: object) -> list[str]:
    merged = getattr(restored, "merged", [])
    refused = getattr(restored, "refused", [])
    return [f"state restored from {x}" for x in merged] + [f"state refused: {x}" for x in refused]


def _describe(
    serve: Serve, envelope: EventEnvelope | None, config: ActionConfig, notes: list[str]
) -> StepResult:
    """The step's result as single mode describes it, plus the runs handed on (deferred) and
    why, which a single step never has."""
    from holon.actions.step_report import describe

    result = describe(serve, envelope, config, notes=notes)
    known = {row.intent for row in result.runs}
    for report in serve.reports:
        for intent in report.deferred:
            if intent.id in known:
                result.runs = [r for r in result.runs if r.intent != intent.id]
            known.add(intent.id)
            result.runs.append(
                RunRow(
                    intent=intent.id,
                    skill=str(intent.args.get("skill") or ""),
                    subject=intent.target.subject(),
                    status="deferred",
                )
            )
        for entry in report.decisions:
            if entry.get("outcome") == "deferred":
                what = f"run_skill on {entry.get('subject') or '?'} deferred"
                result.decided.append(Line(what, str(entry.get("rationale") or "")[:200]))
    return result


def bundle_dir_of(config: ActionConfig) -> Path:
    return config.bundle_dir or config.state_dir.parent / "bundles"


__all__ = ["MATRIX_ENV", "bundle_dir_of", "deferred_runs", "run_decide", "run_settle"]
