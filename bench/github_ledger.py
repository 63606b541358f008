"""Which effect made which call: the GitHub benchmark's attribution of the fake's call log.

Every call the loopback fake records is charged to the outermost charged section running when it
arrived: an executor handler's attempt, one of serve's progress or check-run writes, or a facts
question the controller asked. Outermost, because a merge asks the facts again and a pull
request's facts may look a reviewer's permission up: those calls are the merge's, the pull
request's. A call outside every section is a bench error (something unaccounted for).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bench.github_limits import Limit
from holon.executor.result import ActionResult
from holon.intent import ActionIntent


@dataclass
class Performed:
    """One charged section: an effect's attempt, a hook's write or a facts question."""

    row: str
    limit: Limit | None = None
    attempt: int = 1
    status: str = "succeeded"
    intent: str = ""  # the intent an effect's attempt performed
    calls: list[tuple[str, str | None]] = field(default_factory=list)


# By effect: the docs row, and the figure for a no-op (nothing written) when it has one.
EFFECT_ROWS: dict[str, tuple[str, int | None]] = {
    "comment": ("comment, reply, progress, settle", 1),
    "label": ("label, unlabel", 1),
    "unlabel": ("label, unlabel", 1),
    "close_issue": ("close an issue", 1),
    "request_review": ("request reviews", 1),
    "dispatch": ("workflow dispatch, repository dispatch", None),
    "merge": ("merge", 1),
}
NO_OP = {
    "comment": "already says it",
    "label": "present",
    "unlabel": "absent",
    "close_issue": "closed already",
    "request_review": "requested already",
    "merge": "merged already",
}
FACTS = {
    "permission": "facts: an actor's permission",
    "pull": "facts: a pull request",
    "is_holon_pr": "facts: whether a pull request is Holon's",
    "checks_green": "facts: checks on a sha",
    "head": "facts: a pull request's head",
}


class Ledger:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.rows: list[Performed] = []
        self._open: Performed | None = None
        self.label = ""  # appended to each row's name ("first", "again")

    @contextmanager
    def charge(self, row: str, limit: Limit | None = None) -> Iterator[Performed]:
        item = Performed(row, limit)
        if self._open is not None:
            yield item  # nested: the outer section pays
            return
        before = len(self.server.calls)
        self._open = item
        try:
            yield item
        finally:
            self._open = None
            item.calls = [(c.method, c.operation) for c in self.server.calls[before:]]
            if self.label:
                item.row = f"{item.row} [{self.label}]"
            self.rows.append(item)

    def handler(self, name: str, handler: Callable[[ActionIntent, int], ActionResult]) -> Any:
        """`handler` (an executor handler for effect `name`), each attempt charged."""
        row, no_op = EFFECT_ROWS.get(name, (name, None))

        def perform(intent: ActionIntent, attempt: int) -> ActionResult:
            with self.charge(name) as item:
                result = handler(intent, attempt)
                effect = result.effect or {}
                waits = bool(effect.get("wait"))  # a merge that must wait wrote nothing either
                done = result.status != "succeeded" or effect.get("performed") is not False
                parts = [str(intent.args.get("kind") or "")] if name == "comment" else []
                if waits:
                    parts.append(f"waits: {effect['wait']}")
                elif not done and name in NO_OP:
                    parts.append(NO_OP[name])
                done |= waits
                parts = [p for p in parts if p]
                item.row = f"{name} ({', '.join(parts)})" if parts else name
                item.limit = Limit(row, 0 if done or no_op is None else no_op)
                item.attempt, item.status, item.intent = attempt, result.status, intent.id
            return result

        return perform

    def handlers(self, handlers: Mapping[str, Any]) -> dict[str, Any]:
        return {name: self.handler(name, h) for name, h in handlers.items()}

    def section(self, row: str, limit: Limit, function: Callable[..., Any]) -> Any:
        """`function`, each call charged to `row`."""

        @functools.wraps(function)
        def charged(*args: Any, **kwargs: Any) -> Any:
            with self.charge(row, limit):
                return function(*args, **kwargs)

        return charged

    def facts(self, facts: Any) -> None:
        """Charge the controller's questions to the facts rows (on this instance only)."""
        for method, row in FACTS.items():
            limit = Limit(row, 1 if method == "checks_green" else 0)
            setattr(facts, method, self.section(row, limit, getattr(facts, method)))

    @contextmanager
    def hooks(self) -> Iterator[None]:
        """Serve's progress and check-run writes (`github_hooks`) charged while inside. The
        check-run writes are imported by the hooks when a pass needs them, so they are charged
        where they live (`holon.github.checks`)."""
        from holon.github import checks
        from holon.serve import github_hooks

        progress = Limit("comment, reply, progress, settle")
        check = Limit("start, settle a check run")
        charged = {
            (github_hooks, "start_progress"): ("progress (start)", progress),
            (github_hooks, "settle"): ("progress (settle)", progress),
            (checks, "start_check"): ("check run (start)", check),
            (checks, "settle_check"): ("check run (settle)", check),
        }
        saved = {key: getattr(*key) for key in charged}
        for (module, name), (row, limit) in charged.items():
            setattr(module, name, self.section(row, limit, saved[(module, name)]))
        try:
            yield
        finally:
            for (module, name), function in saved.items():
                setattr(module, name, function)

    def unattributed(self) -> int:
        return len(self.server.calls) - sum(len(p.calls) for p in self.rows)
