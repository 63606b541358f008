"""`holon serve`: the proactive loop outside Actions, fed by replay files, a loopback webhook
receiver and timer ticks, operated through a control inbox in its state directory.

Checkpoint policy: the state is saved (atomically, previous copy kept) before a skill run starts,
every `checkpoint_every` events, every `checkpoint_seconds`, after every control command, and when
the loop stops. Journal lines are written as they happen (a killed process loses none); an
operating-system crash may lose the lines since the last checkpoint, which the deterministic ids
make safe to replay.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from pydantic import ValidationError

from holon import jsonio
from holon.closure.agent import summarize_agent
from holon.closure.record import ClosureRecord
from holon.controller.decide import PolicyDecider
from holon.controller.facts import RepoFacts, StaticFacts
from holon.controller.loop import Controller, Journals
from holon.controller.policy import load_policy
from holon.errors import InvalidInput
from holon.executor.executor import build_executor
from holon.executor.handlers import RunSkillHandler
from holon.executor.result import ActionResult
from holon.gateway.envelope import EventEnvelope, Scope, Subject, envelope_id
from holon.gateway.replay import MAX_LINE_BYTES, parse_line
from holon.skills.catalog import SkillCatalog, default_catalog
from holon.state.model import ServeState, prune
from holon.state.store import StateStore


@dataclass
class ServeOptions:
    state_dir: Path
    workspace: Path | None = None
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
    checkpoint_every: int = 1000
    checkpoint_seconds: float = 5.0
    fsync_journals: bool = False
    journal_keep: int | None = None  # rotated journal segments kept; None: all of them
    mention: str | None = "holon"
    repo: str | None = None


def _replay_paths(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.iterdir() if p.suffix in (".ndjson", ".jsonl")))
        elif path.is_file():
            found.append(path)
        else:
            raise InvalidInput(f"replay path not found: {path}")
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
    ) -> None:
        self.options = options
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

    # -- lifecycle ---------------------------------------------------------------------------
    def open(self) -> Controller:
        options = self.options
        policy = load_policy(options.policy)  # fail on a bad policy before touching anything
        replay = _replay_paths(options.replay)
        self._replay_files = replay
        self.store.acquire()
        try:
            self.state = self.store.load()
        except BaseException:
            self.store.release()
            raise
        journal: dict[str, Any] = {"fsync": options.fsync_journals, "keep": options.journal_keep}
        journals = Journals(
            events=self.store.journal("events", **journal),
            decisions=self.store.journal("decisions", **journal),
            actions=self.store.journal("actions", **journal),
        )
        executed = {
            entry["intent_id"]: ActionResult.model_validate(entry)
            for entry in journals.actions.read()
        }
        run_skill = None
        if not options.dry_run and (options.agent or options.image):
            run_skill = RunSkillHandler(
                workspace=options.workspace or Path.cwd(),
                output_root=options.state_dir / "runs",
                clock=self.clock,
                runtime=options.runtime,
                agent=options.agent,
                image=options.image,
                describe=self._describe,
            )
        self.controller = Controller(
            state=self.state,
            journals=journals,
            executor=build_executor(dry_run=options.dry_run, clock=self.clock, run_skill=run_skill),
            decider=PolicyDecider(policy, self._facts),
            facts=self._facts,
            policy=policy,
            catalog=self._catalog,
            clock=self.clock,
            writer=self.writer,
            checkpoint=self.checkpoint,
            idempotent_runs=options.dry_run,
            executed=executed,
        )
        self.controller.recover()
        if not self.controller.paused and self.controller.kept():
            # `holon serve resume` on a stopped serve leaves its kept events for this start.
            self.controller.resume(by="serve start")
        self.checkpoint()
        return self.controller

    def _describe(self, skill: str) -> str:
        found = self._catalog.get(skill)
        return found.description if found else skill

    def close(self) -> None:
        if self.controller is not None:
            self.checkpoint()
            self.controller.journals.close()
        self.store.release()

    def checkpoint(self) -> None:
        prune(self.state, now=self.clock())
        self.store.save(self.state)
        self._since_checkpoint = 0
        self._last_checkpoint = time.monotonic()

    def _maybe_checkpoint(self) -> None:
        self._since_checkpoint += 1
        due = time.monotonic() - self._last_checkpoint >= self.options.checkpoint_seconds
        if self._since_checkpoint >= self.options.checkpoint_every or due:
            self.checkpoint()

    # -- inputs ------------------------------------------------------------------------------
    def replay_events(self) -> Iterator[EventEnvelope]:
        """Every event of the replay files in order; a broken line is journaled and skipped."""
        assert self.controller is not None
        for path in self._replay_files:
            with path.open("rb") as handle:
                for number, raw in enumerate(jsonio.lines(handle, MAX_LINE_BYTES), start=1):
                    where = f"{path.name} line {number}"
                    try:
                        env = parse_line(
                            raw, where, received_at=self.clock(), mention=self.options.mention
                        )
                    except InvalidInput as exc:
                        self.controller.journals.events.append(
                            {
                                "id": f"error:{path.name}:{number}",
                                "at": self.clock().isoformat(),
                                "error": str(exc),
                            }
                        )
                        continue
                    if env is not None:
                        yield env

    def apply_controls(self) -> None:
        assert self.controller is not None
        commands = self.store.take_controls()
        for command in commands:
            name = command.get("command")
            by = str(command.get("by") or "operator")
            if name == "pause":
                self.controller.pause(by, str(command.get("reason") or ""))
            elif name == "resume":
                self.controller.resume(by)
        if commands:
            self.checkpoint()

    def handle(self, env: EventEnvelope) -> None:
        assert self.controller is not None
        self.controller.handle(env)
        self._maybe_checkpoint()

    # -- the loop ----------------------------------------------------------------------------
    def run(self, queue: Any = None) -> int:
        """Replay, then serve the queue and ticks until stopped (or once)."""
        assert self.controller is not None
        for env in self.replay_events():
            self.apply_controls()
            if self.stopping.is_set():
                return 0
            self.handle(env)
        next_tick = time.monotonic()
        while not self.stopping.is_set():
            self.apply_controls()
            if self.options.tick_interval is not None and time.monotonic() >= next_tick:
                self.handle(tick_envelope(self.clock(), self.options.repo))
                next_tick = time.monotonic() + self.options.tick_interval
            if queue is not None:
                while (env := queue.take(timeout=0)) is not None:
                    self.handle(env)
            if self.options.once or (queue is None and self.options.tick_interval is None):
                break
            self.stopping.wait(0.05)
        return self.exit_code()

    def exit_code(self) -> int:
        """`serve --once` exits (docs/closure.md): 0 done, 1 failed, 2 human, 3 not finished."""
        closures = []
        for record in self.state.live("closure"):
            try:
                closures.append(ClosureRecord.model_validate(record.data).closure())
            except ValidationError:
                return 1  # a closure this build cannot read (restored state) is never success
        summary = summarize_agent(closures)
        if summary.state == "failed":
            return 1
        if "awaiting_operator_input" in summary.waiting_reasons:
            return 2
        if summary.state in ("waiting", "continuable", "active"):
            return 3
        return 0


def install_signal_handlers(serve: Serve) -> None:
    def stop(signum: int, frame: FrameType | None) -> None:
        serve.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
