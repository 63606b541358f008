"""Dispatches validated intents to their handlers; a handler that raises is a failed attempt
whose error names the exception's class, never its message (except `Deferred`: the attempt is
performed elsewhere, and the controller records it so)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from datetime import datetime

from holon.errorlog import log_traceback
from holon.executor.deferral import Deferred
from holon.executor.handlers import (
    DryRunHandler,
    Handler,
    InternalHandler,
    NotConfiguredHandler,
)
from holon.executor.result import ActionResult
from holon.executor.routing import SkillRouter
from holon.intent import ActionIntent

INTERNAL = ("wait", "noop")
GITHUB = ("comment", "label", "unlabel", "request_review", "merge", "close_issue", "dispatch")


class Executor:
    def __init__(self, handlers: Mapping[str, Handler], clock: Callable[[], datetime]) -> None:
        self.handlers = dict(handlers)
        self.clock = clock

    def execute(self, intent: ActionIntent, attempt: int) -> ActionResult:
        handler = self.handlers.get(intent.type)
        if handler is None:
            return NotConfiguredHandler(self.clock, f"no handler for {intent.type}")(
                intent, attempt
            )
        try:
            return handler(intent, attempt)
        except Deferred:
            raise  # performed elsewhere: the controller records it inflight (attempts.py)
        except Exception as exc:  # a handler bug must not take the loop down; it is journaled
            # Only the class: the message may quote a token or the raw payload, and the error
            # travels into the journal, the state and the subject's closure.
            # The traceback (secret-looking words masked) goes to the operator's error log.
            log_traceback(exc)
            why = f"{exc.__class__.__name__} raised by the {intent.type} handler"
            return NotConfiguredHandler(self.clock, why)(intent, attempt)


def build_executor(
    *,
    dry_run: bool,
    clock: Callable[[], datetime],
    run_skill: Handler | None,
    github: Mapping[str, Handler] | None = None,
    hosted: Mapping[str, Handler] | None = None,
    host_skills: Collection[str] = (),
    preview: Mapping[str, Handler] | None = None,
) -> Executor:
    """Dry run: every GitHub effect journaled, none performed; skill runs run only when a
    runner is configured (`run_skill`: they touch nothing but their own output directory),
    else they are journaled too. Otherwise GitHub effects go through `github` (effect name ->
    the GitHub edge's handler, when a token is configured) or fail saying why. Skill runs go
    to the runner, except host skills (`host_skills`, the catalog's `runs: host`), which go to
    `hosted` (skill -> Holon's own handler); in a dry run or without one, a host skill is
    previewed (`preview`: what it would do, read from the run's artifacts) or journaled."""
    handlers: dict[str, Handler] = {name: InternalHandler(clock) for name in INTERNAL}
    dry = DryRunHandler(clock)
    # Without a GitHub edge (or in a dry run) there is nowhere to act: a host skill shows the
    # exact effect it would perform and never reaches a runner.
    unhosted: dict[str, Handler] = {name: dry for name in host_skills}
    unhosted.update({k: v for k, v in (preview or {}).items() if k in host_skills})
    if dry_run:
        handlers.update({name: dry for name in GITHUB})
        if run_skill is None:
            handlers["run_skill"] = dry
        else:
            handlers["run_skill"] = SkillRouter(run_skill, unhosted) if unhosted else run_skill
    else:
        missing = NotConfiguredHandler(
            clock, "GitHub effects need GITHUB_TOKEN (and the repository); or run with --dry-run"
        )
        handlers.update({name: missing for name in GITHUB})
        handlers.update({k: v for k, v in (github or {}).items() if k in GITHUB})
        runner = run_skill or NotConfiguredHandler(
            clock, "no agent configured for skill runs: pass --agent or --image"
        )
        routes = {**unhosted, **(hosted or {})}
        handlers["run_skill"] = SkillRouter(runner, routes) if routes else runner
    return Executor(handlers, clock)
