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
- after a pass whose event was an authorized `/holon stop`, the stopped subject's comment (of
  its current unit's skill, or Holon's comment on it when it had no work) becomes the handoff
  of its closure (`userinterlude`: stopped by whom, how to restart), also when nothing was
  running: an explicit command is answered, and the comment agrees with the closure. No other
  event that ended no run writes a handoff (`/holon help` gets only its usage reply);
- before each pass, the live facts start a new pass (their per-pass cache).

Publishing (the host skill `github-publish`) is the last step of the run it publishes, not work
of its own: it announces nothing when it starts, and when it ends its handoff (with the pull
request it opened or the commit it pushed) replaces the comment of the published skill, the one
the user asked for, and completes that skill's check run. A PR fix whose commit moved the pull
request's head also gets that outcome on the new head: the check run of the head GitHub shows.

A failed write here is reported (one line, journaled by the caller's `note`) and never fails the
pass: the work was decided and done; only its announcement on GitHub is missing. It is not
tried again by itself: a failed start is made good by the run's settle (which creates what it
does not find), a failed settle by its publishing or the next run of the same skill on the
subject (the effects upsert by marker, so nothing is doubled).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from holon.closure.record import ClosureRecord
from holon.controller.pass_report import PassReport
from holon.controller.spend_guard import GUARD as SPEND_GUARD
from holon.errorlog import log_traceback
from holon.errors import HolonError
from holon.executor.handlers import Handler
from holon.executor.result import ActionResult, EffectOutput
from holon.github.effects import EffectRefused, Scope, Subject, subject_from
from holon.github.facts import GitHubFacts
from holon.github.progress import settle, start_progress
from holon.github.publish_names import PUBLISHED
from holon.github.publish_names import SKILL as PUBLISH
from holon.intent import ActionIntent
from holon.spend import Spend
from holon.terminal import line

if TYPE_CHECKING:
    from holon.closure.handoff import ArtifactLink, Handoff
    from holon.github.publish_found import Found

NOTE_LIMIT = 300
FIX = "github-pr-fix"  # its publishing moves the pull request's head
REVIEW = "github-review"  # its publishing names the commit it reviewed


def announced_skill(intent: ActionIntent) -> str | None:
    """The skill whose comment and check run stand for `intent`'s run: its own, or for
    publishing the skill whose run it publishes (publishing's own when that is not one)."""
    skill = str(intent.args.get("skill") or "") or None
    if skill != PUBLISH:
        return skill
    inputs = intent.args.get("inputs")
    published = inputs.get("skill") if isinstance(inputs, dict) else None
    return published if published in PUBLISHED else skill


def run_url_of(env: Mapping[str, str]) -> str | None:
    """The Actions run serve is in, for the progress link; None outside Actions."""
    names = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    server, repo, run = (env.get(name) for name in names)
    if not (server and repo and run and run.isascii() and run.isdigit()):
        return None
    return f"{server.rstrip('/')}/{repo}/actions/runs/{run}"


@dataclass(frozen=True)
class Settled:
    """The last handoff a subject's comment was settled with, and that comment's address."""

    handoff: Handoff
    comment_url: str | None


def usage_line(spend: Spend | None) -> list[str]:
    """The handoff's line on what the subject's runs spent on their model (docs/budgets.md)."""
    if spend is None:
        return []
    from holon.controller.budget import figure

    return [f"model usage: {figure(spend, None, None)}"]


@dataclass(frozen=True)
class CutShort:
    """A step that ended before it finished (`holon action`'s cleanup after a cancelled,
    timed-out or killed step): why, said instead of a user's stop, and how to look up what
    GitHub holds of a run it cut short (`publish_found`; None: nothing to look up)."""

    reason: str
    look_up: Callable[[ActionIntent], Found | None] = lambda intent: None


def handoff_for(
    intent: ActionIntent,
    closure: ClosureRecord,
    made: EffectOutput | None,
    workflow: str,
    usage: Spend | None = None,
    cut_short: str | None = None,
    found: Found | None = None,
) -> Handoff:
    """The handoff of `intent`'s run on its subject, from the subject's closure and what the run
    made (what the comment says; `holon action` also builds it offline for its outputs), and
    what its runs spent (`usage`). A run cut short says why (`cut_short`) and what GitHub was
    found to hold of it (`found`)."""
    # The handoff models and their prose only when a subject has work to hand off.
    from holon.closure.handoff import HandoffContext, build_handoff
    from holon.closure.handoff import Subject as HandoffSubject

    target = intent.target
    skill = announced_skill(intent)
    if made is None and found is not None:
        made = found.made
    artifacts, state = _artifacts(made, skill)
    state += usage_line(usage)
    context = HandoffContext(
        subject=HandoffSubject(kind=target.kind, id=str(target.id)),
        workflow=workflow,
        skill=skill,
        evidence=list(found.lines) if found is not None else [],
        artifacts=artifacts,
        state=state,
        cut_short=cut_short,
    )
    return build_handoff(closure.closure(), closure.report(), context)


def subject_handoff(
    subject: str, closure: ClosureRecord, workflow: str, usage: Spend | None = None
) -> Handoff:
    """The handoff of a subject with no run of this step to speak of (a run a spend limit held
    back): its closure alone, and what its runs spent."""
    from holon.closure.handoff import HandoffContext, build_handoff
    from holon.closure.handoff import Subject as HandoffSubject

    kind, _, number = subject.partition(":")
    context = HandoffContext(
        subject=HandoffSubject(kind=kind, id=number), workflow=workflow, state=usage_line(usage)
    )
    return build_handoff(closure.closure(), closure.report(), context)


STOP = "stop_command"  # the interruption a `/holon stop` wait records


def stops_of(report: PassReport) -> list[ActionIntent]:
    """The stops `report`'s pass performed: the wait intents of authorized `/holon stop`
    commands (a refused stop performs none), each succeeded."""
    done = {r.intent_id for r in report.results if r.status == "succeeded"}
    return [
        intent
        for intent in report.intents
        if intent.type == "wait" and intent.args.get("interruption") == STOP and intent.id in done
    ]


def spend_limited(report: PassReport) -> list[str]:
    """The subjects `report`'s pass left waiting on the operator because a spend limit held
    back a run (controller/spend_guard.py): closures whose detail ends in such a refusal's line."""
    reasons = {
        str(item.get("reason"))
        for entry in report.decisions
        for item in entry.get("refused") or []
        if isinstance(item, dict) and item.get("guard") == SPEND_GUARD
    }
    if not reasons:
        return []
    return [
        subject
        for subject, closure in report.closures.items()
        if any(closure.closure().detail.endswith(reason) for reason in reasons)
    ]


def continued_subjects(report: PassReport) -> list[str]:
    """The subjects whose held work `report`'s pass continued (its `continued` decisions)."""
    found: list[str] = []
    for entry in report.decisions:
        if entry.get("outcome") != "continued":
            continue
        named = [entry.get("subject")] + [
            i.get("target") for i in entry.get("intents") or [] if isinstance(i, dict)
        ]
        found += [s for s in named if isinstance(s, str) and s.startswith(("issue:", "pull_"))]
    return list(dict.fromkeys(found))


def stop_handoff(
    stop: ActionIntent,
    closure: ClosureRecord,
    skill: str | None,
    workflow: str,
    made: EffectOutput | None = None,
) -> Handoff:
    """The handoff of a subject `stop` stopped: its closure says who stopped it and how to
    restart; `skill` names the comment it settles (the subject's current unit's), `made` what
    that unit published (its pull request stays linked from the comment a stop rewrites)."""
    from holon.closure.handoff import HandoffContext, build_handoff
    from holon.closure.handoff import Subject as HandoffSubject

    actor = stop.args.get("actor")
    artifacts, state = _artifacts(made, skill)
    context = HandoffContext(
        subject=HandoffSubject(kind=stop.target.kind, id=str(stop.target.id)),
        workflow=workflow,
        skill=skill,
        artifacts=artifacts,
        state=state,
        interrupted_by=actor if isinstance(actor, str) and actor else None,
    )
    return build_handoff(closure.closure(), closure.report(), context)


def made_by(report: PassReport, intent: ActionIntent) -> EffectOutput | None:
    """What `intent`'s successful attempt in `report`'s pass made (see `_made`)."""
    return _made(report, intent)


@dataclass(frozen=True)
class _Awaiting:
    intent: ActionIntent
    closure: ClosureRecord
    made: EffectOutput | None


def _publishing_next(report: PassReport, intent: ActionIntent) -> str | None:
    """The id of the `holon.run.settled` event this pass made for `intent`, a run of a skill
    whose result is published (None: not one, or no such event)."""
    if intent.args.get("skill") not in PUBLISHED:
        return None
    for event in report.follow_ups:
        if event.payload.get("intent") == intent.id:
            return event.id
    return None


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
        # What `holon action` reports: each subject's last settled handoff and comment, and
        # the writes that failed (a token without a permission).
        self.settled: dict[str, Settled] = {}
        self.failed_writes: list[str] = []
        # The skill of a subject's current unit of work, whose comment a stop settles (the
        # serve sets it: it holds the state); None: the stop has a comment of its own.
        self.skill_of: Callable[[str], str | None] = lambda subject: None
        # What the subject's current unit published (its pull request, its commit), as the
        # state recorded it: a comment settled by a later step still shows it.
        self.made_of: Callable[[str], EffectOutput | None] = lambda subject: None
        # What an intent made, as its settled record keeps it (by intent id): a publishing
        # recovery settled from the actions journal made it in a process that did not live
        # to settle the comment.
        self.made_by: Callable[[str], EffectOutput | None] = lambda intent_id: None
        # What the subject's current unit's runs spent, as the state recorded it: a comment
        # settled by another process than the runs' (a crash, a re-run) still shows it.
        self.spent_of: Callable[[str], Spend | None] = lambda subject: None
        # The head of the subject's current run and the commit its fix moved the pull request
        # to: a settle by a later pass (`resettle`) completes their check runs too.
        self.heads_of: Callable[[str], tuple[str | None, str | None]] = lambda s: (None, None)
        # What each subject's skill runs spent in this process (the handoff's usage line).
        self.spent: dict[str, Spend] = {}
        # Subjects whose comment a settle failed to write, and those written since: the serve
        # keeps the first in its state, so a later pass (a re-run, the next event, a tick)
        # writes the handoff the comment lacks (`resettle`).
        self.unsettled: set[str] = set()
        self.resettled: set[str] = set()
        # Runs whose settle waits for the pass of their `holon.run.settled` (by its event id).
        self._awaiting: dict[str, _Awaiting] = {}
        # Told each progress comment written when a run starts (the serve journals it: the
        # time to first comment of `holon report`); what it gets names no text of the comment.
        self.announced: Callable[[dict[str, Any]], None] = lambda what: None
        # Set by `holon action`'s cleanup: the runs it settles were cut short, not stopped by
        # a user; their handoff says so, and what GitHub holds of them.
        self.cut_short: CutShort | None = None

    def before_pass(self) -> None:
        self.facts.new_pass()

    def wrap_run_skill(self, handler: Handler) -> Handler:
        """`handler`, announcing the work on GitHub before its first attempt."""

        def run(intent: ActionIntent, attempt: int) -> ActionResult:
            # Publishing continues a run that announced itself already: its comment and check
            # run are settled again when publishing ends (`after_pass`), never started anew.
            if attempt == 1 and intent.args.get("skill") != PUBLISH:
                self._guarded("start", self._start, intent)
            return handler(intent, attempt)

        return run

    def after_pass(self, report: PassReport) -> None:
        """Settle what announced each run the pass ended (`ended_runs`: settled, expired by a
        tick, cancelled by a stop, refused on recovery) with its subject's closure."""
        seen: set[tuple[str, object, object]] = set()
        for result in report.results:
            if result.type == "run_skill" and result.usage is not None:
                before = self.spent.get(result.subject)
                self.spent[result.subject] = result.usage + before if before else result.usage
        awaited = self._awaiting.pop(report.event_id, None) if report.event_id else None
        for intent in report.ended_runs:
            subject = intent.target.subject()
            closure = report.closures.get(subject)
            key = (subject, announced_skill(intent), intent.args.get("head_sha"))
            if closure is None or key in seen:
                continue
            seen.add(key)
            made = _made(report, intent)
            if made is None and not _attempted(report, intent):
                # Settled in this pass without an attempt of its own: recovery took it from
                # the actions journal (its process was killed before it saved the state and
                # settled the comment). What it made is what its settled record keeps.
                made = self.made_by(intent.id)
            follow_up = _publishing_next(report, intent)
            if follow_up is not None:
                # Whether it is published is decided by the pass right after (its
                # `holon.run.settled`): until then the comment says working and the check run
                # stays in progress, never `finished` or success before the pull request or
                # the commit exists. Kept as unsettled meanwhile: a step cut short in between
                # has the comment written by the next pass (unsettled.py).
                self._awaiting[follow_up] = _Awaiting(intent, closure, made)
                self.unsettled.add(subject)
                self.resettled.discard(subject)
                continue
            self._guarded("settle", self._settle, intent, closure, made, subject=subject)
        # A stop is answered even when it ended no run; a run it ended settled its comment.
        answered = {key[0] for key in seen}
        if awaited is not None:
            # The pass of a run's `holon.run.settled`: its publishing (an ended run above)
            # settled the comment, or nothing was published and the run's closure says it now.
            subject = awaited.intent.target.subject()
            if subject not in answered:
                answered.add(subject)
                closure = report.closures.get(subject) or awaited.closure
                self._guarded(
                    "settle", self._settle, awaited.intent, closure, awaited.made, subject=subject
                )
        for stop in stops_of(report):
            subject = stop.target.subject()
            closure = report.closures.get(subject)
            if closure is None or subject in answered:
                continue
            answered.add(subject)
            self._guarded("settle", self._settle_stop, stop, closure, subject=subject)
        # Held work continued (controller/held.py) ended no run, yet moved the subject's
        # closure on: its comment says so (finished, or still continuing).
        for subject in continued_subjects(report):
            closure = report.closures.get(subject)
            if closure is None or subject in answered:
                continue
            answered.add(subject)
            self.settle_subject(subject, closure)
        # A run a spend limit held back started nothing, yet its subject now waits on the
        # operator: the comment says so, with the figure and how to continue.
        for subject in spend_limited(report):
            closure = report.closures.get(subject)
            if closure is None or subject in answered:
                continue
            answered.add(subject)
            self.settle_subject(subject, closure)

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
        outcome = start_progress(self.scope, subject, skill, self.run_url)
        comment = outcome.output.get("comment_id")
        self.announced(
            {
                "intent_id": intent.id,
                "event_id": intent.event_id,
                "subject": intent.target.subject(),
                "skill": skill,
                "comment_id": comment if isinstance(comment, int) else None,
            }
        )
        head = intent.args.get("head_sha")
        if subject.kind == "pull_request" and isinstance(head, str) and head:
            from holon.github.checks import start_check  # check runs: pull requests only

            start_check(self.scope, subject, head, skill=skill, run_url=self.run_url)

    def _settle(
        self, intent: ActionIntent, closure: ClosureRecord, made: EffectOutput | None
    ) -> None:
        subject = self._subject(intent)
        if subject is None:
            return
        skill = announced_skill(intent)
        key = intent.target.subject()
        cut_short, found = self._cut_short(intent, closure)
        handoff = handoff_for(
            intent,
            closure,
            made,
            self.scope.workflow,
            self._usage(key),
            cut_short=cut_short,
            found=found,
        )
        # Remembered before the write: a failed write still leaves the step its handoff.
        key = intent.target.subject()
        self.settled[key] = Settled(handoff, None)
        try:
            outcome = settle(self.scope, subject, handoff)
        finally:
            # The check runs are completed even when the comment's write failed: a check run
            # left in progress would hold the pull request (a failed write is raised after).
            head = intent.args.get("head_sha")
            moved_to = made.sha if made is not None else None
            if intent.args.get("skill") != PUBLISH or skill != FIX:
                moved_to = None
            self._settle_checks(subject, head, moved_to, handoff)
        url = outcome.output.get("url")
        self.settled[key] = Settled(handoff, url if isinstance(url, str) else None)

    def _settle_checks(
        self, subject: Subject, head: object, moved_to: str | None, handoff: Handoff
    ) -> None:
        """Complete the check run of the run's head and, when a fix's commit moved the pull
        request's head, the new head's (GitHub shows that commit's checks: it carries the
        outcome too, created completed, never in progress)."""
        if subject.kind != "pull_request" or not isinstance(head, str) or not head:
            return
        from holon.github.checks import settle_check  # check runs: pull requests only

        try:
            settle_check(self.scope, subject, head, handoff, run_url=self.run_url)
        finally:
            if moved_to and moved_to != head:
                settle_check(self.scope, subject, moved_to, handoff, run_url=self.run_url)

    def _cut_short(
        self, intent: ActionIntent, closure: ClosureRecord
    ) -> tuple[str | None, Found | None]:
        """Why a run the cleanup settled as interrupted ended, and what GitHub holds of it
        (looked up, read-only); (None, None) for any other settle."""
        cut = self.cut_short
        if cut is None or closure.closure().operator_wait != "interruption":
            return None, None
        try:
            return cut.reason, cut.look_up(intent)  # a refusal is one of its lines
        except Exception as exc:  # a bug in the look-up must not leave the comment unsettled
            log_traceback(exc)
            return cut.reason, None

    def _settle_stop(self, stop: ActionIntent, closure: ClosureRecord) -> None:
        subject = self._subject(stop)
        if subject is None:
            return
        key = stop.target.subject()
        skill = self.skill_of(key)
        handoff = stop_handoff(stop, closure, skill, self.scope.workflow, self.made_of(key))
        self.settled[key] = Settled(handoff, None)
        outcome = settle(self.scope, subject, handoff)
        url = outcome.output.get("url")
        self.settled[key] = Settled(handoff, url if isinstance(url, str) else None)

    def settle_subject(
        self,
        subject: str,
        closure: ClosureRecord,
        *,
        recorded: tuple[str, ...] = (),
        checks: bool = False,
    ) -> None:
        """Settle `subject`'s comment with a closure decided after its passes (a re-activation:
        still continuing, or a spent budget's operator wait): the comment this step settled
        for it, with what that said it made, else the one of its current work. `checks`: its
        current run's check runs too (a settle an earlier pass failed to write)."""
        self._guarded(
            "settle", self._settle_subject, subject, closure, recorded, checks, subject=subject
        )

    def _settle_subject(
        self, key: str, closure: ClosureRecord, recorded: tuple[str, ...], checks: bool = False
    ) -> None:
        from holon.closure.handoff import HandoffContext, build_handoff
        from holon.closure.handoff import Subject as HandoffSubject

        kind, _, number = key.partition(":")
        subject = subject_from("progress", self.scope.event_repo, kind, number)
        before = self.settled.get(key)
        if before is not None:
            context = before.handoff.context
        else:
            skill = self.skill_of(key)
            artifacts, state = _artifacts(self.made_of(key), skill)
            context = HandoffContext(
                subject=HandoffSubject(kind=kind, id=number),
                workflow=self.scope.workflow,
                skill=skill,
                artifacts=artifacts,
                state=state,
            )
        recorded = (*recorded, *usage_line(self._usage(key)))
        if recorded:
            kept = [line for line in context.state if not line.startswith("model usage: ")]
            context = context.model_copy(update={"state": [*kept, *recorded]})
        handoff = build_handoff(closure.closure(), closure.report(), context)
        self.settled[key] = Settled(handoff, before.comment_url if before else None)
        try:
            outcome = settle(self.scope, subject, handoff)
        finally:
            if checks:
                self._settle_checks(subject, *self.heads_of(key), handoff)
        url = outcome.output.get("url")
        self.settled[key] = Settled(handoff, url if isinstance(url, str) else None)

    def _usage(self, subject: str) -> Spend | None:
        """What `subject`'s runs spent: in this process, else as the state recorded it for its
        current unit (the runs ran in a process killed before it settled the comment)."""
        spent = self.spent.get(subject)
        return spent if spent is not None else self.spent_of(subject)

    def _guarded(
        self, what: str, write: Callable[..., None], *args: Any, subject: str | None = None
    ) -> None:
        try:
            write(*args)
            if subject is not None:
                self.unsettled.discard(subject)
                self.resettled.add(subject)
            return
        except EffectRefused as exc:
            self._failed(line(f"GitHub: progress not written ({what}): {exc.reason}", NOTE_LIMIT))
        except HolonError as exc:  # GitHubError among them: one line, nothing secret
            self._failed(line(f"GitHub: progress not written ({what}): {exc}", NOTE_LIMIT))
        except Exception as exc:  # a bug here must not fail the pass; its message may quote data
            log_traceback(exc)
            name = type(exc).__name__
            self._failed(f"GitHub: progress not written ({what}): {name} raised")

        if subject is not None:
            self.unsettled.add(subject)
            self.resettled.discard(subject)

    def _failed(self, text: str) -> None:
        self.failed_writes.append(text)
        self.note(text)


def _made(report: PassReport, intent: ActionIntent) -> EffectOutput | None:
    """What `intent`'s last attempt in this pass produced (publishing: the pull request, the
    commit), also a failed one's (a fix pushed before its reply was refused: the branch moved);
    None when it made nothing, or was settled in another pass."""
    for result in reversed(report.results):
        if result.intent_id == intent.id:
            return result.output
    return None


def _attempted(report: PassReport, intent: ActionIntent) -> bool:
    """Whether `report`'s pass made an attempt at `intent` (else it settled it otherwise:
    from the actions journal, expired, cancelled, refused)."""
    return any(result.intent_id == intent.id for result in report.results)


def _artifacts(
    made: EffectOutput | None, skill: str | None
) -> tuple[list[ArtifactLink], list[str]]:
    """The handoff's artifacts and recorded state for what a run of `skill` made (published:
    the pull request and the commit, or the commit a review is of)."""
    if made is None:
        return [], []
    from holon.closure.handoff import ArtifactLink

    artifacts = []
    if made.url is not None and made.number is not None:
        artifacts.append(ArtifactLink(name=f"pull request #{made.number}", url=made.url))
    if made.sha is None:
        return artifacts, []
    return artifacts, [f"{'review of' if skill == REVIEW else 'commit'} {made.sha}"]


__all__ = [
    "CutShort",
    "GitHubHooks",
    "Settled",
    "announced_skill",
    "continued_subjects",
    "handoff_for",
    "made_by",
    "run_url_of",
    "spend_limited",
    "stop_handoff",
    "stops_of",
    "subject_handoff",
]
