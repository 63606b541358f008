"""What `holon serve` says when it stops: what it did, and why it exits as it does, in two lines."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from holon.controller.pass_report import PassReport
from holon.terminal import line

if TYPE_CHECKING:
    from holon.serve.serve import Serve

_FIRST = 3  # subjects named in the exit line; the rest are counted
_DETAIL = 120  # characters of a closure's detail in the exit line


def one_line(text: str) -> str:
    """A closure's detail (it may quote the agent or a comment) as one short terminal line."""
    return line(text, _DETAIL)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass
class Tally:
    """What the passes of one serve run did: decisions by outcome, attempts by status."""

    decisions: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)
    dry_run: int = 0

    def add(self, report: PassReport) -> None:
        decisions = self.decisions
        for d in report.decisions:  # one or two a pass: no Counter.update machinery
            outcome = str(d.get("outcome"))
            decisions[outcome] += 1
        for r in report.results:
            self.actions[r.status] += 1
            self.dry_run += r.dry_run


def did_line(serve: Serve) -> str:
    tally = serve.tally
    decisions, actions = tally.decisions, tally.actions
    parts = [f"{decisions.get('duplicate', 0)} duplicate"]
    if decisions.get("paused"):
        parts.append(f"{decisions['paused']} kept while paused")
    parts.append(f"{serve.broken} broken")
    parts.append(f"{len(serve.failed)} failed inside Holon")
    performed = sum(actions.values())
    how = [f"{tally.dry_run} dry run"] if tally.dry_run else []
    how.append(f"{actions.get('failed', 0)} failed")
    return (
        f"serve: {_plural(serve.events, 'event')} handled ({', '.join(parts)}); "
        f"{_plural(performed, 'action attempt')} ({', '.join(how)})"
    )


def _named(items: list[str]) -> str:
    shown = "; ".join(items[:_FIRST])
    return shown + (f"; and {len(items) - _FIRST} more" if len(items) > _FIRST else "")


def exit_line(serve: Serve, code: int) -> str:
    if serve.stopping.is_set():
        waiting = len(serve.inbox) if serve.inbox is not None else 0
        kept = (
            f"; {_plural(waiting, 'accepted delivery')} kept for the next start" if waiting else ""
        )
        return (
            f"exit 0: stopped by a signal{kept if waiting else ''}; the state is saved "
            "(`holon serve status` says what each subject waits on)"
        )
    closures = list(serve.closures().items())
    if code == 1:
        if serve.failed:
            return (
                f"exit 1: {_plural(len(serve.failed), 'event')} failed inside Holon "
                "(see the error log named above)"
            )
        failed = [
            f"{key}: {one_line(r.detail)}" for key, r in closures if r.closure_outcome == "failed"
        ]
        return f"exit 1: failed: {_named(failed)}"
    if code == 2 and serve.kept_while_paused():
        pause = serve.state.get("pause", "serve")
        data = pause.data if pause else {}
        why = f": {one_line(str(data['reason']))}" if data.get("reason") else ""
        return (
            f"exit 2: paused by {one_line(str(data.get('by') or 'the operator'))}{why}; "
            f"{_plural(serve.kept_while_paused(), 'event')} kept for `holon serve resume`"
        )
    if code == 2:
        human = [
            f"{key} ({r.lifecycle_outcome}: {one_line(r.detail)})"
            for key, r in closures
            if r.waiting_reason == "awaiting_operator_input"
        ]
        return f"exit 2: waiting on the operator: {_named(human)}"
    if code == 3:
        open_ = [
            f"{key} ({r.waiting_reason or r.closure_outcome})"
            for key, r in closures
            if r.closure_outcome in ("waiting", "continuable")
        ]
        return f"exit 3: not finished, nobody needs to act: {_named(open_) or 'work is running'}"
    if not closures:
        return "exit 0: nothing to close: no subject this run handled has work on record"
    return f"exit 0: {_plural(len(closures), 'subject')} finished"


def describe_run(serve: Serve, code: int) -> list[str]:
    # Subject keys come from payloads (a ref name, say): the whole line is made safe, too.
    return [line(did_line(serve)), line(exit_line(serve, code))]
