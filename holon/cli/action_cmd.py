"""`holon action`: one GitHub Actions step, configured by environment variables only (the
composite action sets them from its inputs; docs/cli.md lists them)."""

from __future__ import annotations

import argparse
import os
import signal
from datetime import UTC, datetime
from types import FrameType
from typing import TYPE_CHECKING

from holon.errors import Interrupted, InvalidInput

# Its start-up (the serve and what the step imports for it) ends when the serve opens, which
# resumes the garbage collector (holon/gcpause.py).
RESUMES_GC = True

if TYPE_CHECKING:
    from holon.actions.config import ActionConfig
    from holon.actions.result import StepResult
    from holon.serve.serve import Serve


def configure(parser: argparse.ArgumentParser) -> None:
    from holon.actions.config import VARIABLES

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    width = max(len(name) for name, _ in VARIABLES)
    rows = "\n".join(f"  {name.ljust(width)}  {what}" for name, what in VARIABLES)
    parser.epilog = (
        "configured by environment variables only:\n"
        f"{rows}\n\n"
        "exit: 0 the job succeeds, 1 it fails (the closure's job conclusion, or Holon failed\n"
        "to handle the event), 64 bad input (one line), 70 a bug in Holon"
    )


def _say(text: str) -> None:
    print(text, flush=True)


def _say_line(text: str) -> None:
    from holon.terminal import line

    print(line(text), flush=True)


class _Stopper:
    """SIGINT then SIGTERM (the runner cancelling the job): the first unwinds the step like
    Ctrl-C (agents and containers stopped, the state saved with its run still inflight for the
    cleanup phase); later ones only ask the serve to stop, so saving is not cut short."""

    def __init__(self) -> None:
        self.serve: Serve | None = None
        self.signalled = False
        self._stopping = False  # inside `stopping.set()`, which a later signal must not re-enter

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        first, self.signalled = not self.signalled, True
        # A signal can land while an earlier one's handler is inside `Event.set`, holding its
        # lock (not reentrant): set again there, the handler would wait on itself for ever.
        serve = self.serve
        if serve is not None and not self._stopping and not serve.stopping.is_set():
            self._stopping = True
            try:
                serve.stopping.set()
            finally:
                self._stopping = False
        if first:
            raise KeyboardInterrupt

    def opened(self, serve: Serve) -> None:
        self.serve = serve

    def unwound(self) -> None:
        """The step has unwound or finished: its state is saved, nothing is left to stop.
        Later signals are ignored from here on, also while the interpreter exits: Python puts
        the default action back for the signals it handled as it shuts down, so a SIGTERM then
        (the runner's, after its SIGINT) would kill the process and lose its exit code."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if self.signalled:
            from holon.held_signals import forget_handled_interrupt

            forget_handled_interrupt()  # the interruption was handled: the exit code stands


def main(args: argparse.Namespace) -> int:
    from holon.actions import step

    step.drop_runtime_tokens(os.environ)
    # Masks before any other line this step prints: a secret echoed later is hidden.
    for text in step.mask_lines(os.environ):
        _say(text)
    env = dict(os.environ)
    # The model keys are this process's from here on, for its runs' key proxies: not its
    # children's, nor readable by its agents (docs/security.md "The model key").
    from holon.actions.config import MODEL_KEYS
    from holon.key_custody import hold_secrets

    hold_secrets(MODEL_KEYS)
    try:
        from holon.actions.config import ActionConfig

        config = ActionConfig.from_env(env)
    except InvalidInput as exc:
        step.finish_refused(env, str(exc))
        raise
    if config.phase == "cleanup":
        from holon.actions.interrupt import run_cleanup

        cleaned = run_cleanup(env, config, clock=lambda: datetime.now(UTC), say=_say_line)
        if cleaned is None:
            return 0
        step.finish(env, cleaned, _say)
        _report(cleaned)
        return cleaned.exit_code
    step.clear_marker(config)
    stopper = _Stopper()
    stopper.install()
    try:
        result = _main_phase(env, config, stopper)
    except InvalidInput as exc:
        step.finish_refused(env, str(exc))
        raise
    except KeyboardInterrupt:
        stopper.unwound()
        raise Interrupted(
            "holon action: interrupted; the cleanup step settles what this step left"
        ) from None
    step.finish(env, result, _say)
    _report(result)
    step.mark_done(config)
    stopper.unwound()  # finished: a cancel now has nothing to stop, the exit code stands
    return result.exit_code


def _main_phase(env: dict[str, str], config: ActionConfig, stopper: _Stopper) -> StepResult:
    clock = lambda: datetime.now(UTC)  # noqa: E731
    if config.mode == "single":
        from holon.actions.single import run_step

        return run_step(env, config, clock=clock, say=_say_line, on_serve=stopper.opened)
    from holon.actions import fanout

    run = fanout.run_decide if config.mode == "decide" else fanout.run_settle
    return run(env, config, clock)


def _report(result: StepResult) -> None:
    """Each problem once, as an error annotation, then why the step exits as it does."""
    from holon.actions.commands import command

    for problem in result.problems:
        _say(command("error", problem))
    _say_line(_exit_line(result))


def _exit_line(result: StepResult) -> str:
    closure = result.closure
    if result.problems:
        count = len(result.problems)
        return (
            f"holon action: exit {result.exit_code}: {count} "
            f"problem{'s' if count > 1 else ''} above (also in the step summary)"
        )
    if closure is None:
        return f"holon action: exit {result.exit_code}: no work on record for this event"
    shown: str = closure.closure_outcome
    if closure.waiting_reason:
        shown += f" ({closure.waiting_reason})"
    return (
        f"holon action: exit {result.exit_code}: {result.closure_subject} {shown}, "
        f"job {'succeeds' if result.exit_code == 0 else 'fails'}"
    )


__all__ = ["configure", "main"]
