"""`holon serve`: the proactive loop outside Actions, fed by replay files, a loopback webhook
receiver and timer ticks, operated through a control inbox in its state directory.

Checkpoint policy: the state is saved (atomically, previous copy kept) before a skill run starts,
every `checkpoint_every` events, within `checkpoint_seconds` of any change (idle or not), after
every control command, and when the loop stops. Journal lines are written as they happen (a killed
process loses none); an operating-system crash may lose the lines since the last checkpoint, which
the deterministic ids make safe to replay.

Webhook deliveries arrive through the inbox (`inbox.py`), on disk before they were answered 202;
deliveries a previous serve accepted and did not finish are taken first. An event whose handling
fails inside Holon is journaled as failed (the traceback goes to the error log) and the loop goes
on: one bad delivery never stops the serve or the deliveries behind it.
"""

from __future__ import annotations

import contextlib
import gc
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import SecretStr, ValidationError

from holon import gcpause, jsonio
from holon.closure.mapping import worst_exit
from holon.closure.record import ClosureRecord
from holon.controller.budget import run_constraints
from holon.controller.decide import Decider, PolicyDecider
from holon.controller.facts import RepoFacts, StaticFacts
from holon.controller.journals import Journals
from holon.controller.loop import Controller
from holon.controller.parts import CrashPoint, no_crash
from holon.controller.pass_report import PassReport
from holon.controller.policy import Policy, load_policy
from holon.controller.pricing import pricer
from holon.controller.recovery import deciding_events
from holon.errorlog import log_traceback
from holon.errors import HolonError, InvalidInput
from holon.executor.executor import build_executor
from holon.executor.handlers import Handler, LazyHandler, RunSkillHandler
from holon.executor.result import ActionResult, EffectOutput
from holon.gateway.envelope import EventEnvelope, Scope, Subject, envelope_id
from holon.gateway.replay import MAX_LINE_BYTES, read_line
from holon.gateway.trigger import TriggerCheck
from holon.github.publish_names import SKILL as PUBLISH
from holon.github.retry import Wait
from holon.serve.context import EventContext
from holon.serve.inbox import Inbox, Taken
from holon.serve.report import Tally
from holon.serve.runs import runs_dir_of
from holon.skills.catalog import SkillCatalog, default_catalog, host_skills
from holon.spend import Spend
from holon.state.model import Record, ServeState, prune
from holon.state.store import StateStore
from holon.validation import describe_validation_error

if TYPE_CHECKING:
    import github

    from holon.github.access import Pull


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass
class ServeOptions:
    state_dir: Path
    workspace: Path | None = None
    runs_dir: Path | None = None  # skill-run outputs; None: `<state-dir>.runs` beside it
    replay: list[Path] = field(default_factory=list)
    listen: tuple[str, int] | None = None
    secrets: list[str] = field(default_factory=list)
    tick_interval: float | None = None
    policy: Path | None = None
    dry_run: bool = False
    once: bool = False
    runtime: str = "local"
    agent: list[str] | None = None
    image: str | None = None
    # Given to every skill run: non-secret settings in its spec's env, secrets forwarded.
    agent_env: dict[str, str] = field(default_factory=dict)
    agent_secrets: dict[str, SecretStr] = field(default_factory=dict)
    checkpoint_every: int = 1000
    checkpoint_seconds: float = 5.0
    fsync_journals: bool = False
    journal_keep: int | None = None  # rotated journal segments kept; None: all of them
    mention: str | None = "holon"
    repo: str | None = None
    listening: bool = False  # a receiver feeds the inbox: keep serving until stopped
    # Keep every pass's report (`holon action` summarizes its few passes); a replay of a
    # million events does not hold a million reports.
    keep_reports: bool = False


class PassHooks(Protocol):
    """What the GitHub edge does around passes (`github_hooks.py`): outside the controller."""

    def before_pass(self) -> None: ...

    def wrap_run_skill(self, handler: Handler) -> Handler: ...

    def after_pass(self, report: PassReport) -> None: ...


def _replay_paths(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.iterdir() if p.suffix in (".ndjson", ".jsonl")))
        elif path.is_file():
            found.append(path)
        elif path.exists():  # a device, a FIFO, a socket: not a file of recorded lines
            raise InvalidInput(f"replay path {path} is neither a regular file nor a directory")
        else:
            raise InvalidInput(f"replay path not found: {path}")
    return found


def _executed(entries: Iterator[dict[str, Any]]) -> dict[str, ActionResult]:
    """The last journaled result of every intent; a restored journal is outside input."""
    found: dict[str, ActionResult] = {}
    for number, entry in enumerate(entries, 1):
        try:
            result = ActionResult.model_validate(entry)
        except ValidationError as exc:
            where = f"actions.ndjson entry {number}"
            raise InvalidInput(describe_validation_error(where, exc)) from None
        found[result.intent_id] = result
    return found


def tick_envelope(now: datetime, repo: str | None) -> EventEnvelope:
    key = f"timer:{repo or '-'}:tick:{now.isoformat()}"
    return EventEnvelope(
        id=envelope_id(key),
        source="timer",
        type="timer.tick",
        via="timer",
        scope=Scope(repo=repo),
        at=now,
        subject=Subject(kind="repository", id=repo) if repo else None,
        dedupe_key=key,
        payload={"tick": now.isoformat()},
    )


class Serve:
    def __init__(
        self,
        options: ServeOptions,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        facts: RepoFacts | None = None,
        catalog: SkillCatalog | None = None,
        crashpoint: CrashPoint = no_crash,
        report: Callable[[str], None] = lambda line: None,
        github: Mapping[str, Handler] | None = None,
        hooks: PassHooks | None = None,
        hosted: Mapping[str, Handler] | None = None,
        policy: Policy | None = None,
        context_client: github.Github | None = None,
        run_skill: Handler | None = None,
        decider: Decider | None = None,
        trigger_check: TriggerCheck | None = None,
        pull_reader: Callable[[int], Pull] | None = None,
    ) -> None:
        self.options = options
        # Reads one of Holon's pull requests on a timer tick (None: offline, none is watched).
        self.pull_reader = pull_reader
        # Who decides (controller/deciders.py); None: the policy's rules.
        self._decider = decider
        # Reads a write's trigger again before the write (None: offline, the check skipped).
        self.trigger_check = trigger_check
        # Replaces the runner's skill-run handler (fan-out's decide and settle); None: the runner.
        self._run_skill = run_skill
        # The edge's client, read through for each agent run's context (None: the payload's).
        self.context_client = context_client
        self._current: EventEnvelope | None = None  # the event of the pass under way
        # Loaded once by a caller that also builds the GitHub edge from its settings, so the
        # edge and the passes follow the same file (read twice, it could change between).
        self._policy = policy
        self.github = github  # GitHub effects performed for real (None: offline)
        self.hooks = hooks  # progress and check run around passes (None: offline)
        self.hosted = hosted  # host skills (github-publish) by name (None: offline)
        self._titles: dict[int, str] = {}  # subject number -> title, from the events seen
        self.crashpoint = crashpoint
        self.report = report  # one line an operator should see now (the CLI prints it)
        self.clock = clock
        self.store = StateStore(options.state_dir)
        self.stopping = threading.Event()
        self.writer = f"serve-{uuid.uuid4().hex[:8]}"
        self._facts = facts or StaticFacts()
        self._catalog = catalog or default_catalog()
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()
        self.state = ServeState()
        self.controller: Controller | None = None
        self.inbox: Inbox | None = None
        self.events = 0
        self.broken = 0
        self.failed: list[str] = []  # events whose handling failed inside Holon
        self.tally = Tally()
        # Holon's own events the passes made (a skill run settled): handled right after the
        # pass that made them, before the next input, like any event (journaled, deduplicated).
        self.follow_ups: list[EventEnvelope] = []
        # The subjects this run's passes settled, with their latest closure (None: no work on
        # record): what `--once` answers for. Kept only by a serve that can end by itself, so a
        # receiver serving for months does not hold every subject it ever saw.
        self.answered: dict[str, ClosureRecord | None] = {}
        # The passes' reports, for a caller that asked (what `holon action` summarizes).
        self.reports: list[PassReport] = []
        self._answers = options.once or not (options.listening or options.tick_interval is not None)
        self._reports = self._answers and options.keep_reports

    # -- lifecycle ---------------------------------------------------------------------------
    def open(self, *, interrupted: str | None = None, actor: str | None = None) -> Controller:
        """Open the state and recover. With `interrupted` (why: the workflow run was cancelled),
        the skill runs left unfinished are first settled as a user interruption, so recovery
        never starts them again (`holon action`'s cleanup phase)."""
        gcpause.resume()  # start-up is done: collect from here on (holon/gcpause.py)
        # Loading builds the long-lived heap the loop keeps (the state, the policy): what the
        # caller had is not walked meanwhile, nor is a full collection due now paid here.
        with _long_lived_heap():
            return self._open(interrupted=interrupted, actor=actor)

    def _open(self, *, interrupted: str | None, actor: str | None) -> Controller:
        options = self.options
        # Fail on a bad policy before touching anything.
        policy = self._policy or load_policy(options.policy)
        runs_dir = runs_dir_of(options.state_dir, options.runs_dir)
        replay = _replay_paths(options.replay)
        self._replay_files = replay
        self.store.acquire()
        journals: Journals | None = None
        try:
            self.state = self.store.load()
            self.inbox = Inbox(options.state_dir)
            kind: dict[str, Any] = {"fsync": options.fsync_journals, "keep": options.journal_keep}
            journals = Journals(
                events=self.store.journal("events", **kind),
                decisions=self.store.journal("decisions", **kind),
                actions=self.store.journal("actions", **kind),
            )
            for journal in (journals.events, journals.decisions, journals.actions):
                journal.open()  # a planted link or FIFO is refused now, not at the first append
            executed = _executed(journals.actions.read())
        except BaseException:
            if journals is not None:
                journals.close()
            if self.inbox is not None:
                self.inbox.close()
                self.inbox = None
            self.store.release()
            raise
        run_skill: Handler | None = self._run_skill
        if run_skill is None and (options.agent or options.image):
            # Also in a dry run: a skill run touches only its own output directory.
            run_skill = RunSkillHandler(
                workspace=options.workspace or Path.cwd(),
                output_root=runs_dir,
                clock=self.clock,
                runtime=options.runtime,
                agent=options.agent,
                image=options.image,
                describe=self._describe,
                host=host_skills(self._catalog),
                context=EventContext(
                    self.event_by_id,
                    self.context_client,
                    untrusted=policy.settings.context.untrusted,
                    permission=self._facts.permission,
                ),
                env=options.agent_env,
                secrets=options.agent_secrets,
                catalog=self._catalog,
                constraints=run_constraints(policy.settings),
                price=pricer(policy.settings.prices),
            )
        executor = build_executor(
            dry_run=options.dry_run,
            clock=self.clock,
            run_skill=run_skill,
            github=self.github,
            hosted=self.hosted,
            host_skills=host_skills(self._catalog),
            # Offline or dry: what publishing would do, shown from the run's own artifacts
            # (made when a run is first previewed: most passes publish nothing).
            preview={PUBLISH: LazyHandler(lambda: self._preview(runs_dir, policy))},
        )
        if self.hooks is not None and run_skill is not None:
            # Wrap what the executor routes run_skill to (the runner, or a host skill's handler).
            executor.handlers["run_skill"] = self.hooks.wrap_run_skill(
                executor.handlers["run_skill"]
            )
        self.controller = Controller(
            state=self.state,
            journals=journals,
            executor=executor,
            decider=self._decider or PolicyDecider(policy, self._facts),
            facts=self._facts,
            policy=policy,
            catalog=self._catalog,
            clock=self.clock,
            writer=self.writer,
            checkpoint=self.checkpoint,
            idempotent_runs=options.dry_run and run_skill is None,
            executed=executed,
            crashpoint=self.crashpoint,
            mention=options.mention,
            repo=options.repo,
            trigger_check=self.trigger_check,
        )
        self._before_pass()
        if interrupted is not None:
            self._account(self.controller.interrupt(interrupted, actor))
        self._account(self.controller.recover())
        if not self.controller.paused and self.controller.kept():
            # `holon serve resume` on a stopped serve leaves its kept events for this start.
            self._account(*self.controller.resume(by="serve start"))
        self.checkpoint()
        return self.controller

    def _preview(self, runs_dir: Path, policy: Policy) -> Handler:
        from holon.github.publish_policy import PublishPolicy
        from holon.github.publish_preview import preview_handlers

        settings = PublishPolicy(
            **policy.settings.publish.model_dump(),
            link_domains=tuple(policy.settings.link_domains),
        )
        return preview_handlers(runs_dir, self.clock, settings, title_of=self._titles.get)[PUBLISH]

    def event_by_id(self, event_id: str) -> EventEnvelope | None:
        """The envelope of `event_id`: the pass's own, else the journaled one."""
        if self._current is not None and self._current.id == event_id:
            return self._current
        if self.controller is None:
            return None
        return deciding_events(self.controller.journals.events, [event_id]).get(event_id)

    def _describe(self, skill: str) -> str:
        found = self._catalog.get(skill)
        return found.description if found else skill

    def close(self) -> None:
        if self.controller is not None:
            self.checkpoint()
            self.controller.journals.close()
        if self.inbox is not None:
            self.inbox.close()
        self.store.release()

    def checkpoint(self) -> None:
        prune(self.state, now=self.clock())
        self.store.save(self.state)
        if self.follow_ups:
            # The window a settled run's event must survive: saved, not handled yet.
            self.crashpoint("after_checkpoint_before_follow_ups")
        if self.inbox is not None:
            self.inbox.compact()  # only what the saved state already accounts for
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()

    def _checkpoint_if_due(self) -> None:
        if self._since_checkpoint == 0:
            return
        due = time.monotonic() - self._last_checkpoint >= self.options.checkpoint_seconds
        if self._since_checkpoint >= self.options.checkpoint_every or due:
            self.checkpoint()

    # -- inputs ------------------------------------------------------------------------------
    def replay_events(self) -> Iterator[EventEnvelope]:
        """Every event of the replay files in order; a broken line is journaled and skipped."""
        assert self.controller is not None
        for path in self._replay_files:
            name = path.name
            with path.open("rb") as handle:
                for number, raw in enumerate(jsonio.lines(handle, MAX_LINE_BYTES), start=1):
                    where = f"{name} line {number}"
                    try:
                        env, text = read_line(
                            raw, where, received_at=self.clock(), mention=self.options.mention
                        )
                    except InvalidInput as exc:
                        self._journal_broken(f"error:{path.name}:{number}", str(exc))
                        continue
                    if env is None:
                        continue
                    journals = self.controller.journals
                    # Its payload is journaled as the text just read, not encoded again.
                    journals.payload_text = (env, text) if text is not None else None
                    try:
                        yield env
                    finally:
                        journals.payload_text = None

    def apply_controls(self) -> None:
        assert self.controller is not None
        commands = self.store.take_new_controls()  # listed only when it may have changed
        for command in commands:
            name = command.get("command")
            by = str(command.get("by") or "operator")
            if name == "pause":
                self.controller.pause(by, str(command.get("reason") or ""))
            elif name == "resume":
                self._before_pass()
                self._account(*self.controller.resume(by))
        if commands:
            self.checkpoint()
        self.handle_follow_ups()

    def journal_wait(self, wait: Wait) -> None:
        """A wait the GitHub client sat through (a rate limit): journaled and said, never silent."""
        line = f"GitHub: waited {wait.seconds:.1f}s before {wait.method} {wait.path}: {wait.reason}"
        self.report(f"holon serve: {line}")
        if self.controller is not None:
            entry = {"id": f"wait:{uuid.uuid4().hex}", "at": self.clock().isoformat(), "wait": line}
            self.controller.journals.events.append(entry)

    def github_note(self, text: str) -> None:
        """A GitHub write around a pass that did not happen: said and journaled, never fatal."""
        self.report(f"holon serve: {text}")
        if self.controller is not None:
            entry = {
                "id": f"github:{uuid.uuid4().hex}",
                "at": self.clock().isoformat(),
                "note": text,
            }
            self.controller.journals.events.append(entry)

    def journal_progress(self, what: dict[str, Any]) -> None:
        """A progress comment written as a run started (`holon report`'s time to first comment):
        journaled once per intent, at the time it was written."""
        if self.controller is not None:
            entry = {"id": f"progress:{what['intent_id']}", "at": self.clock().isoformat()}
            self.controller.journals.events.append({**entry, "progress": what})

    def watch_pulls(self) -> None:
        """On a timer tick: read the pull requests Holon opened that are not known to have ended
        (a bounded few, least recently read first) and record those merged or closed."""
        if self.pull_reader is None or self.controller is None:
            return
        from holon.report.pulls import due, observed

        for watched in due(self.state):
            try:
                pull = self.pull_reader(watched.number)
            except HolonError as exc:  # read again at a later tick; said, never fatal
                self.github_note(f"GitHub: pull request #{watched.number} not read: {exc}")
                continue
            record, entry = observed(
                watched,
                state=pull.state,
                merged=pull.merged,
                at=pull.merged_at if pull.merged else pull.closed_at,
                now=self.clock(),
                writer=self.writer,
            )
            self.state.put(record)
            if entry is not None:
                self.controller.journals.events.append(entry)
            self._since_checkpoint += 1

    def _journal_broken(self, entry_id: str, error: str) -> None:
        assert self.controller is not None
        self.broken += 1
        self.controller.journals.events.append(
            {"id": entry_id, "at": self.clock().isoformat(), "error": error}
        )

    def handle(self, env: EventEnvelope) -> None:
        assert self.controller is not None
        self.events += 1
        self._remember_title(env)
        self._current = env
        try:
            self._before_pass()
            self._account(self.controller.handle(env))
            if env.type == "timer.tick":
                self.watch_pulls()
        except Exception as exc:
            # A bug in Holon, not in the event: journal it, keep the traceback, go on.
            log = log_traceback(exc)
            where = f"traceback in {log}" if log else "no log writable"
            error = f"internal error {type(exc).__name__} while handling {env.id}; {where}"
            self.failed.append(env.id)
            self.controller.journals.events.append(
                {"id": f"failed:{env.id}", "at": self.clock().isoformat(), "error": error}
            )
            self.report(f"holon serve: {error}")
        finally:
            self._current = None
        self._since_checkpoint += 1
        self._checkpoint_if_due()
        self.handle_follow_ups()

    def _remember_title(self, env: EventEnvelope) -> None:
        """The subject's title as its event gave it, for a publish preview's pull request
        title (offline there is no API to ask); bounded, newest kept."""
        payload = env.payload if isinstance(env.payload, dict) else {}
        for key in ("issue", "pull_request"):
            item = payload.get(key)
            if isinstance(item, dict) and isinstance(item.get("number"), int):
                text = item.get("title")
                if isinstance(text, str):
                    self._titles.pop(item["number"], None)
                    self._titles[item["number"]] = text[:4096]
                    while len(self._titles) > 1024:
                        self._titles.pop(next(iter(self._titles)))

    def handle_follow_ups(self) -> None:
        """The follow-up events made so far, oldest first (each may make more: a chain ends
        where the policy decides no run)."""
        while self.follow_ups:
            self.handle(self.follow_ups.pop(0))

    def _before_pass(self) -> None:
        if self.hooks is not None:
            self.hooks.before_pass()

    def _account(self, *reports: PassReport) -> None:
        for report in reports:
            if self.hooks is not None:
                self.hooks.after_pass(report)
                self._settle_unsettled(report)
            self.tally.add(report)
            self.follow_ups.extend(report.follow_ups)
            if self._reports:
                self.reports.append(report)
            if self._answers:
                self.answered.update((s, report.closures.get(s)) for s in report.subjects)

    def _settle_unsettled(self, report: PassReport) -> None:
        """Keep the subjects whose comment this pass failed to write; write those an earlier
        pass (or step) failed to, from their closures in the state (unsettled.py)."""
        from holon.serve import unsettled

        hooks: object = self.hooks  # the GitHub edge's hooks settle comments; others do not
        if not isinstance(hooks, unsettled.Settling):
            return
        now = self.clock()
        failed = unsettled.keep(self.state, hooks, now, self.writer)
        unsettled.resettle(self.state, hooks, now, self.writer, skip=failed | set(report.subjects))

    def drain_inbox(self, timeout: float = 0) -> None:
        """Handle accepted deliveries in order, waiting up to `timeout` for the first."""
        assert self.inbox is not None
        while not self.stopping.is_set():
            taken: Taken | None = self.inbox.take(timeout)
            if taken is None:
                return
            timeout = 0
            if taken.envelope is None:
                self._journal_broken(f"error:inbox:{taken.end}", taken.error or "unreadable")
                self._since_checkpoint += 1
            else:
                self.handle(taken.envelope)
            self.inbox.done(taken)

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> int:
        """Deliveries accepted earlier, the replay, then the inbox and ticks until stopped (or
        once)."""
        with _long_lived_heap():
            return self._run()

    def _run(self) -> int:
        assert self.controller is not None
        self.handle_follow_ups()  # of the runs recovery or a resume at start settled
        self.drain_inbox()
        for env in self.replay_events():
            self.apply_controls()
            if self.stopping.is_set():
                return 0
            self.handle(env)
        next_tick = time.monotonic()
        options = self.options
        while not self.stopping.is_set():
            self.apply_controls()
            if options.tick_interval is not None and time.monotonic() >= next_tick:
                self.handle(tick_envelope(self.clock(), options.repo))
                next_tick = time.monotonic() + options.tick_interval
            if options.once or (not options.listening and options.tick_interval is None):
                self.drain_inbox()
                break
            self.drain_inbox(timeout=0.05)
            self._checkpoint_if_due()
        return self.exit_code()

    def kept_while_paused(self) -> int:
        """Events a paused serve keeps for `holon serve resume`."""
        if self.controller is None or not self.controller.paused:
            return 0
        return len(self.controller.kept())

    def last_skill(self, subject: str) -> str | None:
        """The skill of `subject`'s current unit of work (None: it has none, or not open)."""
        from holon.controller.ledger import last_skill

        if self.controller is None:
            return None
        return last_skill(self.controller.ledger.intent_records(subject))

    def last_made(self, subject: str) -> EffectOutput | None:
        """What the latest publishing of `subject`'s current unit made (None: nothing)."""
        from holon.controller.ledger import current_unit, sort_key
        from holon.github.publish_handler import SKILL as PUBLISH

        if self.controller is None:
            return None
        unit = current_unit(self.controller.ledger.intent_records(subject))
        done = [r for r in unit if r.data.get("skill") == PUBLISH and r.status == "succeeded"]
        latest = max(done, key=sort_key, default=None)
        return _output_of(latest) if latest is not None else None

    def made_by(self, intent_id: str) -> EffectOutput | None:
        """What the intent `intent_id` made, as its settled record keeps it (a publishing
        settled from the actions journal by recovery, with no attempt in this process)."""
        if self.controller is None:
            return None
        record = self.state.get("intent", intent_id)
        return _output_of(record) if record is not None else None

    def unit_spend(self, subject: str) -> Spend | None:
        """What the skill runs of `subject`'s current unit spent on their model, as the state's
        spend records keep it (one per attempt, `<day>/<intent id>:<attempt>`); None: none
        recorded. A comment settled by another process than the runs' names it from here."""
        from holon.controller.ledger import current_unit
        from holon.controller.spending import SEPARATOR

        if self.controller is None:
            return None
        unit = current_unit(self.controller.ledger.intent_records(subject))
        runs = {r.key for r in unit if r.data.get("type") == "run_skill"}
        if not runs:
            return None
        total: Spend | None = None
        for record in self.state.records.values():
            if record.kind != "spend" or record.deleted:
                continue
            source = record.key.partition(SEPARATOR)[2]
            if source.rpartition(":")[0] not in runs:
                continue
            try:
                spend = Spend.model_validate(record.data)
            except ValidationError:
                continue  # not Holon's shape: counts as nothing
            total = spend if total is None else total + spend
        return total

    def last_heads(self, subject: str) -> tuple[str | None, str | None]:
        """The head sha of `subject`'s current unit's latest skill run (not publishing), and
        the commit a fix's publishing moved the pull request to: the check runs its comment's
        settle completes (None: none; a restored value that is no sha is not one)."""
        from holon.controller.ledger import current_unit, sort_key
        from holon.github.publish_handler import SKILL as PUBLISH

        if self.controller is None:
            return None, None
        unit = current_unit(self.controller.ledger.intent_records(subject))
        runs = [
            r
            for r in unit
            if r.data.get("type") == "run_skill" and r.data.get("skill") not in (None, PUBLISH)
        ]
        if not runs:
            return None, None
        latest = max(runs, key=sort_key)
        head = latest.data.get("head_sha")
        head = head if isinstance(head, str) and _SHA.fullmatch(head) else None
        made = self.last_made(subject) if latest.data.get("skill") == "github-pr-fix" else None
        moved = made.sha if made is not None and made.sha and _SHA.fullmatch(made.sha) else None
        return head, moved

    def closures(self) -> dict[str, ClosureRecord]:
        """The closure of every subject this run settled that has one (docs/serve.md)."""
        return {s: c for s, c in self.answered.items() if c is not None}

    def exit_code(self) -> int:
        """`serve --once` exits (docs/closure.md): 0 done, 1 failed, 2 human, 3 not finished,
        for the subjects this run's passes settled, the most severe of their closures; never
        for older subjects in the state. An event Holon failed to handle is a failure too: its
        work was never decided."""
        if self.failed:
            return 1
        if self.kept_while_paused():
            return 2  # nothing is decided until the operator resumes
        return worst_exit(c.exit_code for c in self.closures().values())


# A running serve keeps a large heap that lives as long as it does (the state's records, every
# intent's result, the subjects it answers for), and CPython's full collection walks all of it:
# in a 40,000-event replay four full collections took about 0.4 s each, an eighth of the run.
# While the loop runs, a full collection waits for ten times as many younger ones; unreachable
# cycles are still collected, later. The caller's setting is restored when the loop ends.
FULL_COLLECTION_EVERY = 100


@contextlib.contextmanager
def _long_lived_heap() -> Iterator[None]:
    """While the loop runs: full collections less often, and what exists as it starts (the
    modules, their pydantic validators, the loaded state: ~165,000 objects, most of the heap a
    full collection walked, 0.3 to 0.4 s each in a 10,000-event replay) frozen out of the
    collector's walks (`gc.freeze`). Frozen objects are still freed by their reference counts;
    only a cycle among them that became garbage waits to be collected until they are unfrozen:
    when the loop ends, unless the caller had frozen objects of its own before (`gcpause`, a
    command's start-up: its choice is kept)."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
    thawed = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield
    finally:
        if thawed:
            gc.unfreeze()
        # Only if no one changed it meanwhile (a nested serve restores its own first).
        if gc.get_threshold()[2] == max(full, FULL_COLLECTION_EVERY):
            gc.set_threshold(*(gc.get_threshold()[:2]), full)


def _output_of(record: Record) -> EffectOutput | None:
    """What a settled intent's record says it made (None: nothing, or not Holon's shape)."""
    result = record.data.get("result")
    output = result.get("output") if isinstance(result, dict) else None
    try:
        return EffectOutput.model_validate(output) if output else None
    except ValidationError:
        return None  # a restored state is not trusted: nothing shown


def install_signal_handlers(serve: Serve) -> None:
    inside = [False]

    def stop(signum: int, frame: FrameType | None) -> None:
        # A signal can land while an earlier one's handler is inside `Event.set`, holding its
        # lock (not reentrant): set again there, the handler would wait on itself for ever.
        if inside[0] or serve.stopping.is_set():
            return
        inside[0] = True
        try:
            serve.stopping.set()
        finally:
            inside[0] = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
