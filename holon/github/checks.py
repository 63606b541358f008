"""The `Holon` check run on a pull request's head commit: in progress while Holon works, then
completed with the conclusion of the closure table (`holon.closure.mapping`) and the handoff as
its summary.

Holon finds its own check run again as it finds its comment: among the commit's check runs named
`Holon`, one created by Holon's own app (its login `<app>[bot]`; only an app can write check
runs) whose summary carries the marker (subject, workflow, skill). It is updated in place; a
new one is created when there is none, or when starting work again after the last one completed
(GitHub shows the latest run of a name). A create answered with a 5xx is looked up before
anything is sent again, as for comments.

Calls: 1 (list the commit's `Holon` check runs) plus one write (create or update), or none when
the check run already says exactly this; after a 5xx on the create, one more list. A settle of
a check run this process started or found (`Scope.known`) is the update alone, 1 call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from holon.controller.guardrails import HOLON_CHECK
from holon.github.body import SUMMARY_LIMIT, with_marker
from holon.github.comments import comment_marker
from holon.github.effects import EffectRefused, Scope, Subject, subject_for
from holon.github.errors import ServerError
from holon.github.handle import CheckFields, CheckRunView
from holon.github.known import write_known
from holon.github.logins import same_login
from holon.github.marker import Marker, parse_marker
from holon.github.outcome import EffectOutcome
from holon.github.progress import NOUNS
from holon.templating import render

if TYPE_CHECKING:
    from holon.closure.handoff import Handoff

EFFECT = "check_run"
NAME = HOLON_CHECK  # the controller knows it by this name as Holon's own
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_URL = re.compile(r"https?://[^\s<>\"'`]{1,2000}")


def _app(scope: Scope) -> str:
    login = scope.own_login(EFFECT)
    if not login.endswith("[bot]"):
        raise EffectRefused(
            EFFECT, f"only a GitHub App writes check runs, and {login} is not an app's login"
        )
    return login.removesuffix("[bot]")


def find_own_check(scope: Scope, sha: str, key: Marker | None) -> CheckRunView | None:
    """The latest `Holon` check run on `sha` by Holon's app that carries marker `key`."""
    app = _app(scope)
    own = [
        run
        for run in scope.repo.check_runs(sha, NAME)
        if run.name == NAME and same_login(run.app, app) and parse_marker(run.summary) == key
    ]
    return max(own, key=lambda run: run.id) if own else None


def _same(run: CheckRunView, fields: CheckFields) -> bool:
    return (run.status, run.conclusion, run.title, run.summary) == (
        fields.status,
        fields.conclusion,
        fields.title,
        fields.summary,
    )


def _outcome(run: CheckRunView, performed: bool, note: str = "") -> EffectOutcome:
    output = {"check_run_id": run.id, "url": run.url, "status": run.status}
    return EffectOutcome(EFFECT, performed, {**output, "conclusion": run.conclusion}, note)


def _write(
    scope: Scope,
    subject: Subject,
    sha: str,
    skill: str | None,
    build: Callable[[str], CheckFields],
    *,
    new: bool,
) -> EffectOutcome:
    """Update Holon's check run for the key with what `build` makes of its marker, or create
    it (always, with `new`, once the one found has completed)."""
    subject = subject_for(scope, EFFECT, subject)
    if not _SHA.fullmatch(sha):
        raise EffectRefused(EFFECT, "the head sha is not a full commit sha")
    marker = comment_marker(scope, EFFECT, subject, skill)
    fields = build(marker)
    key = parse_marker(marker)
    item = (EFFECT, sha, key)
    if not new:
        # Only a settle goes straight to a known check run: a start may need a new one,
        # which only the look-up can tell.
        updated = write_known(
            scope.known,
            item,
            _said(fields),
            lambda ident: scope.repo.update_check_run(ident, fields),
        )
        if updated is not None:
            return _outcome(updated, True)
    found = find_own_check(scope, sha, key)
    if found is not None and not (new and found.status == "completed"):
        performed = not _same(found, fields)
        if performed:
            found = scope.repo.update_check_run(found.id, fields)
        scope.known.remember(item, found.id, _said(fields))
        return _outcome(found, performed, "" if performed else "the check run already says this")
    try:
        created = scope.repo.create_check_run(sha, NAME, fields)
    except ServerError as exc:
        latest = find_own_check(scope, sha, key)
        if latest is None or (found is not None and latest.id == found.id):
            raise ServerError(
                f"{exc}; no new check run with its marker was found, so a later attempt creates it",
                operation=exc.operation,
                status=exc.status,
            ) from None
        if not _same(latest, fields):
            latest = scope.repo.update_check_run(latest.id, fields)
        scope.known.remember(item, latest.id, _said(fields))
        return _outcome(latest, True, "GitHub answered with an error but had created it")
    scope.known.remember(item, created.id, _said(fields))
    return _outcome(created, True)


def _said(fields: CheckFields) -> str:
    return "\n".join((fields.status, fields.conclusion or "", fields.title, fields.summary))


def _details(run_url: str | None) -> str | None:
    return run_url if run_url is not None and _URL.fullmatch(run_url) else None


def start_check(
    scope: Scope,
    subject: Subject,
    head_sha: str,
    *,
    skill: str | None,
    run_url: str | None = None,
) -> EffectOutcome:
    """Mark `head_sha` in progress: Holon is working on `subject` with `skill`."""
    summary = render(
        "holon.github",
        "progress_summary.md.j2",
        "markdown",
        noun=NOUNS.get(subject.kind, subject.kind),
        number=subject.number,
        skill=skill,
        run_url=run_url,
    )

    def build(marker: str) -> CheckFields:
        return CheckFields(
            status="in_progress",
            title=f"{NAME}: working",
            summary=with_marker(marker, summary, SUMMARY_LIMIT, scope.rules),
            details_url=_details(run_url),
        )

    return _write(scope, subject, head_sha, skill, build, new=True)


def settle_check(
    scope: Scope, subject: Subject, head_sha: str, handoff: Handoff, *, run_url: str | None = None
) -> EffectOutcome:
    """Complete the check run with the conclusion of `handoff`'s closure (the table in
    `holon.closure.mapping`) and the handoff as its summary."""
    from holon.closure.handoff import render_handoff  # its prose only when a run settles

    label = handoff.outcome or "continuing"
    summary = render_handoff(handoff, "summary")

    def build(marker: str) -> CheckFields:
        return CheckFields(
            status="completed",
            conclusion=handoff.report.check_conclusion,
            title=f"{NAME}: {label}",
            summary=with_marker(marker, summary, SUMMARY_LIMIT, scope.rules),
            details_url=_details(run_url),
        )

    return _write(scope, subject, head_sha, handoff.context.skill, build, new=False)
