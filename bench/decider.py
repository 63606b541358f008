"""Benchmark: the agent decider's own cost per event against the policy decider's, and the size
of the model's context as a subject's history grows.

(a) Per event, through the controller's real pass (journal the event, decide, guard, journal
the decision, perform a dry-run label), N distinct comments on GitHub's `issue_comment` example:
the policy decider with a rule labelling each comment, and the agent decider with a model that
answers the same label at once (no sleep, no network), so what is timed is the agent decider's
own work: the context (templates, the view as JSON, cleaning the untrusted text), reading and
validating the answer, the scrubbed rationale and the larger journal line. The decide call alone
is reported beside it. Target: agent <= 2x policy per event, side by side in one run.
(b) The context (system prompt and user message) for a subject after 10 and after 10,000 prior
events, made by real passes so the state holds those records: bytes and an estimate of tokens
(bytes / 4). Target: bounded (the larger within 2% of the smaller).
Run: `python -m bench.decider`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._common import MIN_ROUNDS, Row, alternate, collect, judged, record
from holon.agent.conversation import Message, ModelTurn, ToolCall, ToolSpec, Usage
from holon.controller.agent_decider import AgentDecider
from holon.controller.decide import Decider, PolicyDecider
from holon.controller.decider_prompt import user_prompt
from holon.controller.facts import StaticFacts
from holon.controller.journals import Journals
from holon.controller.loop import Controller
from holon.controller.memory import MAX_PRS, SubjectMemory
from holon.controller.parts import LoadedState
from holon.controller.policy import Policy, parse_policy
from holon.controller.view import ControllerView
from holon.executor.executor import build_executor
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import ServeState

EXAMPLES = Path(__file__).resolve().parents[1] / "tests/fixtures/octokit-webhooks/examples.json"
TARGET = 2.0
CONTEXT_SLACK = 0.02  # the larger context within 2% of the smaller: counters' digits only
REPO = "Codertocat/Hello-World"  # the example's repository
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
POLICY = (
    "version: 1\nsettings: {decider: agent, intents_per_pass: 5, budget: 10}\nrules:\n"
    "  - {name: label, on: github.issue_comment.created, do: label, args: {label: triaged}}\n"
)
ANSWER = ModelTurn(
    tool_calls=[
        ToolCall(
            id="c1",
            name="decide",
            arguments={
                "rationale": "A maintainer asks for triage: label the issue.",
                "intents": [{"type": "label", "args": {"label": "triaged"}}],
            },
        )
    ],
    stop_reason="tool_use",
    usage=Usage(input_tokens=1500, output_tokens=60),
    model="bench-model",
)


class Answering:
    """A model that answers the same decision at once: no network, no sleep, no recording."""

    name = "bench"
    model = "bench-model"

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        return ANSWER


def _example() -> dict[str, Any]:
    for entry in json.loads(EXAMPLES.read_text()):
        if entry["name"] == "issue_comment":
            for payload in entry["examples"]:
                if payload.get("action") == "created":
                    return dict(payload)
    raise SystemExit("no issue_comment.created example")


def events(count: int, subjects: int) -> list[EventEnvelope]:
    """`count` distinct comments by the repository's owner, spread over `subjects` issues."""
    base = json.dumps(_example())
    made = []
    for i in range(count):
        payload = json.loads(base)
        payload["issue"]["number"] = 1 + i % subjects
        payload["comment"].update(
            id=10_000 + i,
            body=f"Could someone triage this? It fails on step {i}.",
            author_association="OWNER",
        )
        made.append(normalize("issue_comment", payload, via="replay", received_at=NOW))
    return made


def controller(root: Path, policy: Policy, decider: Decider) -> Controller:
    root.mkdir(parents=True, exist_ok=True)
    names = ("events", "decisions", "actions")
    journals = Journals(*(Journal(root / f"{n}.ndjson", fsync=False) for n in names))
    return Controller(
        state=ServeState(),
        journals=journals,
        executor=build_executor(dry_run=True, clock=lambda: NOW, run_skill=None),
        decider=decider,
        facts=StaticFacts(),
        policy=policy,
        catalog=default_catalog(),
        clock=lambda: NOW,
        writer="bench",
        idempotent_runs=True,
    )


def make_decider(kind: str, policy: Policy) -> Decider:
    facts = StaticFacts()
    rules = PolicyDecider(policy, facts)
    if kind == "policy":
        return rules
    return AgentDecider(Answering(), policy, facts, fallback=rules)


def pass_seconds(kind: str, policy: Policy, envs: list[EventEnvelope], work: Path) -> float:
    """Every event through a fresh controller's pass; the seconds of the passes only."""
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        ctl = controller(Path(tmp), policy, make_decider(kind, policy))
        start = time.perf_counter()
        for env in envs:
            ctl.handle(env)
        seconds = time.perf_counter() - start
        ctl.journals.close()
    return seconds


def decide_seconds(kind: str, policy: Policy, envs: list[EventEnvelope]) -> float:
    decider = make_decider(kind, policy)
    view = ControllerView(paused=False, subject=None)
    start = time.perf_counter()
    for env in envs:
        decider.decide(env, view)
    return time.perf_counter() - start


def check(policy: Policy, envs: list[EventEnvelope], work: Path) -> None:
    """Both sides did their job: every event decided, by the decider named, one label each."""
    for kind in ("policy", "agent"):
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            ctl = controller(Path(tmp), policy, make_decider(kind, policy))
            for env in envs:
                ctl.handle(env)
            lines = list(ctl.journals.decisions.read())
            ctl.journals.close()
        deciders = {d["decider"] for d in lines}
        labels = [i["args"] for d in lines for i in d["intents"]]
        if deciders != {kind} or labels != [{"label": "triaged"}] * len(envs):
            raise SystemExit(f"the {kind} decider did not decide every event: {deciders}")


def context_size(policy: Policy, prior: int, work: Path) -> tuple[int, int]:
    """Bytes of the system prompt and of the user message for issue 1 with `prior` events'
    intent records in the state: a few real passes make them, copies under new keys make up
    the rest (a pass per event would spend minutes re-reading the growing subject)."""
    seed = min(prior, 10)
    envs = events(seed + 1, 1)
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        ctl = controller(Path(tmp), policy, make_decider("policy", policy))
        for env in envs[:-1]:
            ctl.handle(env)
        ctl.journals.close()
    state = ctl.state
    made = [r for r in state.live("intent")]
    for i in range(prior - len(made)):
        state.put(made[i % len(made)].model_copy(update={"key": f"{made[i % len(made)].key}-{i}"}))
    records = len(state.live("intent"))
    if records < prior:
        raise SystemExit(f"{prior} prior events left only {records} intent records")
    subject = LoadedState.of(state).ledger.view("issue:1")
    if len(subject.recent) + len(subject.inflight) == 0:
        raise SystemExit("the subject's view shows none of its records")
    # The subject's memory after as many decisions, one failure remembered per event (more
    # than the ledger keeps: the context must cut it, whoever fills it).
    # Built unvalidated: the record caps these lists itself, and the context must cut them
    # even so (a restored or future memory is not trusted to be small).
    memory = SubjectMemory.model_construct(
        subject=f"{REPO}#issue:1",
        attempts_total=prior,
        outcomes={"success": prior // 2, "failure": prior - prior // 2},
        failed={f"github-issue-solve@{i:040x}": 1 + i % 3 for i in range(prior)},
        prs=list(range(1, min(prior, MAX_PRS) + 1)),
        decisions=prior,
    )
    view = ControllerView(paused=False, subject=replace(subject, memory=memory))
    agent = make_decider("agent", policy)
    assert isinstance(agent, AgentDecider)
    return len(agent.system.encode()), len(user_prompt(envs[-1], view).encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.decider", description=__doc__)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--history", type=int, default=10_000, help="prior events, large side")
    parser.add_argument("--smoke", action="store_true", help="one small round, do not judge")
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work_dir or Path(tempfile.gettempdir())
    work.mkdir(parents=True, exist_ok=True)
    policy = parse_policy(POLICY)
    count = 100 if args.smoke else max(args.events, 1000)
    rounds = 1 if args.smoke else max(args.rounds, MIN_ROUNDS)
    history = 200 if args.smoke else max(args.history, 10_000)
    envs = events(count, 50)
    check(policy, envs[:20], work)
    pass_seconds("policy", policy, envs, work)  # warm both sides
    pass_seconds("agent", policy, envs, work)
    print(f"decider: {count} events per round, {rounds} alternating rounds")
    base, meas = alternate(
        rounds,
        lambda _: pass_seconds("policy", policy, envs, work),
        lambda _: pass_seconds("agent", policy, envs, work),
    )
    policy_s, agent_s = statistics.median(base), statistics.median(meas)
    ratio = agent_s / policy_s
    decide_policy = decide_seconds("policy", policy, envs)
    decide_agent = decide_seconds("agent", policy, envs)
    priors = sorted({10, 100, 1000, history})
    sizes = {prior: context_size(policy, prior, work) for prior in priors}
    small, large = sum(sizes[10]), sum(sizes[history])
    growth = large / small - 1
    per = 1e6 / count
    print()
    print("per event, through the controller's pass (median)")
    print(f"  policy decider   {policy_s * per:8.1f} us")
    print(f"  agent decider    {agent_s * per:8.1f} us   (replayed model, no sleep)")
    print(f"  ratio            {ratio:8.2f}x   (target <= {TARGET:.1f}x)")
    print("the decide call alone (one run, reported)")
    print(f"  policy decider   {decide_policy * per:8.1f} us")
    print(f"  agent decider    {decide_agent * per:8.1f} us")
    print("context given to the model (system + user message)")
    for prior, (system, user) in sizes.items():
        total = system + user
        print(
            f"  {prior:>6} prior events  {total:7d} bytes  ~{total // 4:6d} tokens"
            f"  (system {system}, message {user})"
        )
    print(f"  growth 10 -> {history}: {growth * 100:.2f}%   (target <= {CONTEXT_SLACK * 100:.0f}%)")
    passed = ratio <= TARGET and growth <= CONTEXT_SLACK
    record(
        Row(
            f"agent decider pass, {count:,} events",
            f"{agent_s * per:.1f} us/event",
            f"{policy_s * per:.1f} us/event",
            f"{ratio:.2f}x",
            f"<= {TARGET:g}x",
            judged(args.smoke, ratio <= TARGET),
        )
    )
    record(
        Row(
            f"decider context, 10 -> {history:,} prior events",
            f"{large:,} bytes",
            f"{small:,} bytes",
            f"+{growth * 100:.2f}%",
            f"<= +{CONTEXT_SLACK * 100:g}%",
            judged(args.smoke, growth <= CONTEXT_SLACK),
        )
    )
    if args.smoke:
        print("  result: NOT JUDGED (smoke run)")
        return 0
    print(f"  result: {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
