"""Whether the checks on one exact commit allow a merge (pure), and why not.

Branch protection is not readable with the Actions token, so the required checks are those of
the repository's rulesets (`required_status_checks` rules among the rules that apply to the
base branch; every active ruleset, repository or organization, is in that answer). GitHub still
enforces branch protection on the merge call itself, which answers 405 when it is not met.

- With required checks: each must have reported on the sha and passed. A check and a commit
  status of the same name are both required, as on GitHub; a check pinned to an app
  (`integration_id`) counts only from that app, and a commit status cannot show which app set
  it, so it does not count for such a check.
- With none: every check run and commit status on the sha must have passed, and at least one
  must exist (a commit nothing has checked yet, CI not started, is not green). A repository with
  no CI at all is never merged by Holon.

Passing: a check run completed `success`, `neutral` or `skipped` (GitHub counts those as passed
for a required check), a status `success`. A check not completed, or a status `pending`, is
pending; any other conclusion or state failed. Holon's own check runs (`own`: its workflow
run's jobs, its `Holon` check run) are left out: they are in progress while Holon decides, and
it must not wait on itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from holon.github.access import CheckRun, Status

PASSING = frozenset({"success", "neutral", "skipped"})
State = Literal["green", "pending", "red", "unknown"]


@dataclass(frozen=True)
class Verdict:
    state: State
    reason: str

    @property
    def green(self) -> bool | None:
        """What `RepoFacts.checks_green` answers: pending and red are not green."""
        return None if self.state == "unknown" else self.state == "green"


def required_checks(rules: Iterable[dict[str, Any]]) -> list[tuple[str, int | None]]:
    """(context, app id or None) of every required status check the rules name."""
    found: list[tuple[str, int | None]] = []
    for rule in rules:
        if rule.get("type") != "required_status_checks":
            continue
        parameters = rule.get("parameters")
        items = parameters.get("required_status_checks") if isinstance(parameters, dict) else None
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and isinstance(item.get("context"), str):
                app = item.get("integration_id")
                found.append((item["context"], app if isinstance(app, int) else None))
    return sorted(set(found), key=lambda c: (c[0], c[1] or 0))


def _run_state(run: CheckRun) -> str:
    if run.status != "completed":
        return "pending"
    return "passed" if run.conclusion in PASSING else "failed"


def _status_state(status: Status) -> str:
    return {"success": "passed", "pending": "pending"}.get(status.state, "failed")


def verdict(
    rules: Iterable[dict[str, Any]],
    runs: Iterable[CheckRun],
    statuses: Iterable[Status],
    sha: str,
    own: Callable[[CheckRun], bool] = lambda run: False,
) -> Verdict:
    others = [run for run in runs if not own(run)]
    statuses = list(statuses)
    required = required_checks(rules)
    # (name, state) of everything that decides, per required check or all of it
    groups: list[tuple[str, list[str]]] = []
    if required:
        for context, app in required:
            states = [
                _run_state(r)
                for r in others
                if r.name == context and (app is None or r.app_id == app)
            ]
            if app is None:
                states += [_status_state(s) for s in statuses if s.context == context]
            groups.append((context, states))
    else:
        groups = [(r.name, [_run_state(r)]) for r in others]
        groups += [(s.context, [_status_state(s)]) for s in statuses]
        if not groups:
            return Verdict("pending", f"no check has reported on {sha[:12]} yet")
    failed = [name for name, states in groups if "failed" in states]
    if failed:
        return Verdict("red", f"{_names(failed)} failed on {sha[:12]}")
    waiting = [name for name, states in groups if not states or "pending" in states]
    if waiting:
        return Verdict("pending", f"{_names(waiting)} not passed yet on {sha[:12]}")
    return Verdict("green", "")


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(n[:80]) for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")
