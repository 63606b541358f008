"""What `holon serve` writes on GitHub around its passes, outside the pure controller: the
progress comment and the `Holon` check run (docs/github.md, "Wiring").

- before a `run_skill` is performed on an issue or a pull request, the progress comment is
  upserted (with a link to the Actions run when serve runs in one) and, on a pull request with a
  head sha, the check run is started;
- after a pass, for each skill run it ended (`PassReport.ended_runs`: settled by its attempts,
  recovery and resume included, expired by a tick, cancelled by `/holon stop`, refused by
  recovery at start), the same comment becomes the handoff built from the subject's closure,
  and the check run completes with the closure table's conclusion: however the run ended
  (finished, failed, timed out, cancelled, interrupted), since the closure says which;
- before each pass, the live facts start a new pass (their per-pass cache).

A failed write here is reported (one line, journaled by the caller's `note`) and never fails the
pass: the work was decided and done; only its announcement on GitHub is missing. It is not
tried again by itself: a failed start is made good by the run's settle (which creates what it
does not find), a failed settle by the next run of the same skill on the subject (the effects
upsert by marker, so nothing is doubled).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from holon.closure.handoff import HandoffContext, build_handoff
from holon.closure.handoff import Subject as HandoffSubject
from holon.closure.record import ClosureRecord
from holon.controller.pass_report import PassReport
from holon.errorlog import log_traceback
from holon.errors import HolonError
from holon.executor.handlers import Handler
from holon.executor.result import ActionResult
from holon.github.checks import settle_check, start_check
from holon.github.effects import EffectRefused, Scope, Subject, subject_from
from holon.github.facts import GitHubFacts
from holon.github.progress import settle, start_progress
from holon.intent import ActionIntent
from holon.terminal import line

NOTE_LIMIT = 300


def run_url_of(env: Mapping[str, str]) -> str | None:
    """The Actions run serve is in, for the progress link; None outside Actions."""
    names = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    server, repo, run = (env.get(name) for name in names)
    if not (server and repo and run and run.isascii() and run.isdigit()):
        return None
    return f"{server.rstrip('/')}/{repo}/actions/runs/{run}"


class GitHubHooks:
    def __init__(
        self,
        scope: Scope,
        facts: GitHubFacts,
        *,
        run_url: str | None,
        note: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.scope = scope
        self.facts = facts
        self.run_url = run_url
        self.note = note  # one line an operator should see, journaled by the serve

    def before_pass(self) -> None:
        self.facts.new_pass()

    def wrap_run_skill(self, handler: Handler) -> Handler:
        """`handler`, announcing the work on GitHub before its first attempt."""

        def run(intent: ActionIntent, attempt: int) -> ActionResult:
            if attempt == 1:
                self._guarded("start", self._start, intent)
            return handler(intent, attempt)

        return run

    def after_pass(self, report: PassReport) -> None:
        """Settle what announced each run the pass ended (`ended_runs`: settled, expired by a
        tick, cancelled by a stop, refused on recovery) with its subject's closure."""
        seen: set[tuple[str, object, object]] = set()
        for intent in report.ended_runs:
            subject = intent.target.subject()
            closure = report.closures.get(subject)
            key = (subject, intent.args.get("skill"), intent.args.get("head_sha"))
            if closure is None or key in seen:
                continue
            seen.add(key)
            self._guarded("settle", self._settle, intent, closure)

    # -- the writes ------------------------------------------------------------------------------
    def _subject(self, intent: ActionIntent) -> Subject | None:
        target = intent.target
        if target.kind not in ("issue", "pull_request"):
            return None  # a run on a repository has no thread to write in
        return subject_from("progress", target.repo, target.kind, target.id)

    def _start(self, intent: ActionIntent) -> None:
        subject = self._subject(intent)
        if subject is None:
            return
        skill = str(intent.args.get("skill") or "") or None
        start_progress(self.scope, subject, skill, self.run_url)
        head = intent.args.get("head_sha")
        if subject.kind == "pull_request" and isinstance(head, str) and head:
            start_check(self.scope, subject, head, skill=skill, run_url=self.run_url)

    def _settle(self, intent: ActionIntent, closure: ClosureRecord) -> None:
        subject = self._subject(intent)
        if subject is None:
            return
        skill = str(intent.args.get("skill") or "") or None
        context = HandoffContext(
            subject=HandoffSubject(kind=subject.kind, id=str(subject.number)),
            workflow=self.scope.workflow,
            skill=skill,
        )
        handoff = build_handoff(closure.closure(), closure.report(), context)
        settle(self.scope, subject, handoff)
        head = intent.args.get("head_sha")
        if subject.kind == "pull_request" and isinstance(head, str) and head:
            settle_check(self.scope, subject, head, handoff, run_url=self.run_url)

    def _guarded(self, what: str, write: Callable[..., None], *args: Any) -> None:
        try:
            write(*args)
        except EffectRefused as exc:
            self.note(line(f"GitHub: progress not written ({what}): {exc.reason}", NOTE_LIMIT))
        except HolonError as exc:  # GitHubError among them: one line, nothing secret
            self.note(line(f"GitHub: progress not written ({what}): {exc}", NOTE_LIMIT))
        except Exception as exc:  # a bug here must not fail the pass; its message may quote data
            log_traceback(exc)
            name = type(exc).__name__
            self.note(f"GitHub: progress not written ({what}): {name} raised")


__all__ = ["GitHubHooks", "run_url_of"]
