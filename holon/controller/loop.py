"""The control loop (RFC-0004 section 7): observe, decide, guard, act, record, feed back.

One `handle(envelope)` is one pass. Every event is journaled first; a dedupe key is processed at
most once; while paused events are kept and nothing acts. Intents are recorded inflight before
their effect and settled after it, so a crash between the two is reconciled on the next start
(see `recovery.py`) instead of being lost or repeated. Action results become the subject's closure
evidence, and its latest closure is kept in the state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from holon.closure.derive import derive_closure
from holon.closure.record import ClosureRecord
from holon.controller.decide import Decider, Decision, target_of
from holon.controller.facts import RepoFacts
from holon.controller.guardrails import Refusal, authority_problem, guard
from holon.controller.ledger import StateLedger, timer_until
from holon.controller.policy import Policy
from holon.controller.view import ControllerView
from holon.executor.executor import Executor
from holon.executor.result import ActionResult
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent, IntentRejected, make_intent
from holon.skills.catalog import SkillCatalog
from holon.state.journal import Journal
from holon.state.model import Record, ServeState

# Commands that ask for work again, and so lift a /holon stop; status and help do not.
RESTARTING = ("solve", "fix", "review")


CrashPoint = Callable[[str], None]


def no_crash(name: str) -> None:
    """The default crash hook: the named write points pass by."""


@dataclass
class Journals:
    events: Journal
    decisions: Journal
    actions: Journal

    def close(self) -> None:
        for journal in (self.events, self.decisions, self.actions):
            journal.close()


@dataclass
class Tally:
    """What the loop did since it started: decisions by outcome, action results by status."""

    decisions: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)
    dry_run: int = 0


def pause_record(*, paused: bool, by: str, reason: str, at: datetime, writer: str) -> Record:
    """The serve's pause switch, as the loop and the offline `serve pause|resume` both write it."""
    data = {"paused": paused, "by": by, "reason": reason, "at": at.isoformat()}
    return Record(kind="pause", key="serve", status="live", updated_at=at, writer=writer, data=data)


class Controller:
    def __init__(
        self,
        *,
        state: ServeState,
        journals: Journals,
        executor: Executor,
        decider: Decider,
        facts: RepoFacts,
        policy: Policy,
        catalog: SkillCatalog,
        clock: Callable[[], datetime],
        writer: str,
        checkpoint: Callable[[], None],
        idempotent_runs: bool = False,
        executed: dict[str, ActionResult] | None = None,
        crashpoint: CrashPoint = no_crash,
    ) -> None:
        self.state = state
        self.journals = journals
        self.executor = executor
        self.decider = decider
        self.facts = facts
        self.policy = policy
        self.catalog = catalog
        self.clock = clock
        self.writer = writer
        self.checkpoint = checkpoint
        # In a dry run no effect leaves the process, so nothing needs a checkpoint before it.
        self.idempotent_runs = idempotent_runs
        self.ledger = StateLedger(state)
        # The last journaled result of every intent: an intent whose effect is already in the
        # actions journal is settled from it, never performed again (crash recovery, replays).
        self.executed: dict[str, ActionResult] = dict(executed or {})
        # Called with the name of each write point; crash-recovery tests inject one that kills.
        self.crashpoint = crashpoint
        self.tally = Tally()

    # -- records -----------------------------------------------------------------------------
    def _put(self, kind: Any, key: str, status: str, data: dict[str, Any]) -> Record:
        record = Record(
            kind=kind,
            key=key,
            status=status,
            updated_at=self.clock(),
            writer=self.writer,
            data=data,
        )
        self.state.put(record)
        return record

    @property
    def paused(self) -> bool:
        record = self.state.get("pause", "serve")
        return bool(record is not None and record.data.get("paused"))

    # -- one pass ----------------------------------------------------------------------------
    def handle(self, env: EventEnvelope) -> None:
        now = self.clock()
        self.journals.events.append(
            {
                "id": env.id,
                "at": now.isoformat(),
                "type": env.type,
                "dedupe_key": env.dedupe_key,
                "envelope": env.model_dump(mode="json"),
            }
        )
        if self.state.get("dedupe", env.dedupe_key) is not None:
            self._journal_decision(env, "duplicate", f"{env.dedupe_key} was already processed")
            return
        # No payload: the journal has the event; the state only has to remember the key.
        self._put("dedupe", env.dedupe_key, "seen", {})
        self._put(
            "meta", "last_event", "live", {"id": env.id, "type": env.type, "at": env.at.isoformat()}
        )
        if self.paused:
            self._put("meta", f"pending:{env.id}", "pending", env.model_dump(mode="json"))
            self._journal_decision(env, "paused", "serve is paused: event kept for resume")
            return
        self._decide(env, suffix="")

    def _decide(self, env: EventEnvelope, suffix: str) -> None:
        target = target_of(env)
        subject = target.subject()
        view = ControllerView(paused=self.paused, subject=self.ledger.view(subject))
        decision = self.decider.decide(env, view)
        if decision.special == "recheck":
            self._recheck(env, decision)
            return
        now = self.clock()
        intents: list[ActionIntent] = []
        rejected: list[dict[str, str]] = []
        for proposal in decision.proposals:
            try:
                intents.append(
                    make_intent(
                        type_=proposal.type,
                        target=proposal.target,
                        args=proposal.args,
                        reason=proposal.reason,
                        decider=decision.decider,
                        event_key=env.dedupe_key,
                        event_id=env.id,
                        at=now,
                        skills=self.catalog.names(),
                        priority=proposal.priority,
                    )
                )
            except IntentRejected as exc:
                rejected.append({"type": proposal.type, "reason": str(exc)})
        problem = authority_problem(env, self.facts, self.policy)
        accepted, refused = guard(
            intents,
            env,
            ledger=self.ledger,
            facts=self.facts,
            policy=self.policy,
            now=now,
            budget_left=self.policy.settings.budget,
            authority=problem,
        )
        authorized = problem is None
        if authorized and env.command is not None and env.command.name in RESTARTING:
            # A later work command restarts what a /holon stop interrupted.
            self._resolve_waits(target.subject(), lambda data: bool(data.get("interruption")))
        if decision.special == "stop" and accepted:
            self._cancel_inflight(target.subject())
        refusal = self._refusal_comment(env, refused)
        if refusal is not None:
            accepted = [*accepted, refusal]
        self._journal_decision(
            env, "decided", decision.rationale, decision, accepted, refused, rejected, suffix
        )
        for intent in accepted:
            self._perform(intent, env)
        self._settle_closure(target.subject())

    # -- acting ------------------------------------------------------------------------------
    def _perform(self, intent: ActionIntent, env: EventEnvelope) -> None:
        data = {
            "intent": intent.model_dump(mode="json"),
            "type": intent.type,
            "subject": intent.target.subject(),
            "skill": intent.args.get("skill"),
            "head_sha": intent.args.get("head_sha"),
            "automatic": env.command is None,
            # Which event decided it, and when: what the subject's current unit of work is
            # measured from (ledger.current_unit).
            "event_id": intent.event_id,
            "decided_at": intent.created_at.isoformat(),
            "attempts": 0,
            "result": None,
        }
        record = self._put("intent", intent.id, "inflight", data)
        self.ledger.track_intent(record)
        if intent.type == "run_skill" and not self.idempotent_runs:
            self.checkpoint()  # the inflight record must be durable before the effect starts
        self.run_attempts(intent, data)

    def run_attempts(self, intent: ActionIntent, data: dict[str, Any]) -> None:
        """Attempt `intent` until it succeeds or the policy's attempts are spent; an attempt
        already journaled is taken from the journal instead of being performed again."""
        result = self.executed.get(intent.id)
        first = 1 if result is None else result.attempt + 1
        if result is None or result.status == "failed":
            for attempt in range(first, self.policy.settings.max_attempts + 1):
                result = self.executor.execute(intent, attempt)
                self.crashpoint("after_effect_before_journal")
                self.journals.actions.append(result.model_dump(mode="json"))
                self.executed[intent.id] = result
                self.tally.actions[result.status] += 1
                self.tally.dry_run += result.dry_run
                self.crashpoint("after_journal_before_state")
                if result.status == "succeeded":
                    break
        assert result is not None
        self.settle(intent, data, result)

    def recover(self) -> list[str]:
        """Reconcile intents a previous process left inflight: settle, finish or fail them."""
        notes = []
        for record in self.ledger.inflight():
            intent = ActionIntent.model_validate(record.data["intent"])
            self.run_attempts(intent, dict(record.data))
            settled = self.state.get("intent", intent.id)
            notes.append(
                f"recovered {intent.type} {intent.id}: {settled.status if settled else '?'}"
            )
        return notes

    def settle(self, intent: ActionIntent, data: dict[str, Any], result: ActionResult) -> None:
        # A settled intent keeps only what views and closure evidence read; the full intent and
        # result are in the journals, and the state must stay small.
        kept = {k: v for k, v in data.items() if k != "intent"}
        summary = result.model_dump(
            mode="json",
            include={
                "status",
                "dry_run",
                "run_id",
                "run_status",
                "run_outcome",
                "question",
                "error",
                "run_output_path",
            },
            exclude_defaults=True,
        )
        data = {**kept, "attempts": result.attempt, "result": summary}
        self._put("intent", intent.id, result.status, data)
        if intent.type == "wait" and result.status == "succeeded":
            args = dict(intent.args)
            wait = self._put("wait", intent.id, "live", {**args, "subject": data["subject"]})
            self.ledger.track_wait(wait)

    def _refusal_comment(self, env: EventEnvelope, refused: list[Refusal]) -> ActionIntent | None:
        """One polite refusal per subject and actor when an actor lacks authority."""
        if not any(r.guard == "authority" for r in refused) or env.actor is None:
            return None
        target = target_of(env)
        key = f"refusal:{target.subject()}:{env.actor.login}"
        if self.state.get("cooldown", key) is not None:
            return None
        self._put("cooldown", key, "done", {"subject": target.subject()})
        body = (
            f"Holon only takes commands from people with {self.policy.settings.authority} access "
            "to this repository, so this request was not acted on."
        )
        return make_intent(
            type_="comment",
            target=target,
            args={"body": body, "kind": "refusal"},
            reason="refusal",
            decider="controller",
            event_key=env.dedupe_key,
            event_id=env.id,
            at=self.clock(),
            skills=self.catalog.names(),
        )

    def _cancel_inflight(self, subject: str) -> None:
        for record in self.ledger.intent_records(subject):
            if record.status in ("pending", "inflight") and record.data.get("type") == "run_skill":
                self._put("intent", record.key, "cancelled", dict(record.data))

    def _resolve_waits(self, subject: str, which: Callable[[dict[str, Any]], bool]) -> None:
        for record in self.ledger.wait_records(subject):
            if which(record.data):
                self.state.delete("wait", record.key, at=self.clock(), writer=self.writer)

    def _settle_closure(self, subject: str) -> None:
        evidence = self.ledger.evidence(subject)
        if evidence is None:
            # The current unit of work left no evidence (say, only a usage comment): an
            # earlier unit's closure no longer describes the subject.
            self.state.delete("closure", subject, at=self.clock(), writer=self.writer)
            return
        record = ClosureRecord.of(derive_closure(evidence))
        self._put("closure", subject, "live", record.model_dump(mode="json"))

    # -- timer ticks -------------------------------------------------------------------------
    def _recheck(self, env: EventEnvelope, decision: Decision) -> None:
        now = self.clock()
        notes: list[str] = []
        stale = timedelta(seconds=self.policy.settings.stale_inflight)
        touched: set[str] = set()
        for record in self.ledger.inflight():
            if now - record.updated_at > stale:
                self._put("intent", record.key, "expired", dict(record.data))
                notes.append(f"expired stale {record.data.get('type')} {record.key}")
                touched.add(record.data["subject"])
        for subject in list(self.ledger.waits):
            for wait in self.ledger.wait_records(subject):
                until = timer_until(wait.data)
                if until is not None and until <= now:
                    self.state.delete("wait", wait.key, at=now, writer=self.writer)
                    notes.append(f"timer fired for {subject}")
                    touched.add(subject)
                else:
                    notes.append(f"{subject} still waits on {wait.data.get('on')}")
        self._journal_decision(env, "rechecked", "; ".join(notes) or "no open waits", decision)
        for subject in sorted(touched):
            self._settle_closure(subject)

    # -- pause and resume --------------------------------------------------------------------
    def pause(self, by: str, reason: str) -> None:
        self.state.put(
            pause_record(paused=True, by=by, reason=reason, at=self.clock(), writer=self.writer)
        )

    def kept(self) -> list[Record]:
        """Events kept while paused and not yet decided."""
        return [r for r in self.state.live("meta") if r.key.startswith("pending:")]

    def resume(self, by: str) -> list[str]:
        """Unpause and decide the kept events in order; stale ones expire (journaled)."""
        self.state.put(
            pause_record(paused=False, by=by, reason="", at=self.clock(), writer=self.writer)
        )
        kept = self.kept()
        handled = []
        expire = timedelta(seconds=self.policy.settings.expire_after)
        for record in sorted(kept, key=lambda r: (r.updated_at, r.key)):
            env = EventEnvelope.model_validate(record.data)
            self.state.delete("meta", record.key, at=self.clock(), writer=self.writer)
            # Age counts from when the event was kept, not from the payload's own timestamp.
            if self.clock() - record.updated_at > expire:
                self._journal_decision(
                    env,
                    "expired",
                    "kept while paused longer than the policy allows",
                    suffix=":resumed",
                )
                continue
            self._decide(env, suffix=":resumed")
            handled.append(env.id)
        return handled

    # -- journal -----------------------------------------------------------------------------
    def _journal_decision(
        self,
        env: EventEnvelope,
        outcome: str,
        rationale: str,
        decision: Decision | None = None,
        accepted: list[ActionIntent] | None = None,
        refused: list[Refusal] | None = None,
        rejected: list[dict[str, str]] | None = None,
        suffix: str = "",
    ) -> None:
        self.tally.decisions[outcome] += 1
        entry: dict[str, Any] = {
            "id": f"dec:{env.id}{suffix}",
            "event_id": env.id,
            "at": self.clock().isoformat(),
            "type": env.type,
            "subject": target_of(env).subject(),
            "outcome": outcome,
            "decider": decision.decider if decision else "controller",
            "rule": decision.rule if decision else None,
            "rationale": rationale,
            "intents": [
                {"id": i.id, "type": i.type, "target": i.target.subject(), "args": i.args}
                for i in accepted or []
            ],
            "refused": [
                {"id": r.intent.id, "type": r.intent.type, "guard": r.guard, "reason": r.reason}
                for r in refused or []
            ],
            "rejected": rejected or [],
        }
        self.journals.decisions.append(entry)


__all__ = ["Controller", "CrashPoint", "Journals", "Tally", "no_crash", "pause_record"]
