"""Benchmark: the GitHub edge's API economy and CPU cost, for every effect it performs.

Targets (from the GitHub-edge issue), each printed PASS or FAIL: no effect uses more calls than
docs/github.md documents ("Calls per effect", copied in `bench.github_limits.DOCUMENTED`); a
retried effect (a 5xx after GitHub accepted the create) costs at most one extra look-up; and
the pass itself adds under 2 ms of CPU per handled event over the dry run: the edge's extra CPU
less the client floor, each round's very requests sent again, in order, by a bare PyGithub
client made as the edge makes its own, on a fresh fake (the whole difference is printed too).

All loopback, bounded and self-stopping:

1. CPU, side by side: `Serve` in this process over `examples/serve/` replayed, alternating
   `--dry-run` (the example's static facts) and the real edge built as `holon serve` builds it
   (`github_edge` from an environment naming the fake: its one client, live facts, the progress
   and check-run hooks, the effect and publish handlers), each round on a fresh state directory
   and a fresh seeded fake. The fake runs in a subprocess so its CPU is not counted:
   `time.process_time()` of this process is serve plus the GitHub client, nothing else.
2. Calls of the replay: the same real replay against a fake in this process, twice on the same
   fake (the second finds its comments again), every call charged to what made it
   (`bench.github_ledger`): an effect's attempt, a progress or check-run write, or a facts
   question (permission, pull request, Holon's PR?, checks).
3. Calls of every other effect (`bench.github_effects`): label, unlabel, close, request review,
   publishing an issue run (patch -> blobs/tree/commit/branch through the git data API, then a
   draft PR) and a review run, merge, each twice (the second finds it done: a no-op), and a
   dispatch, through the edge's handlers on a fresh fake.
4. Retry: a 502 after GitHub did it, on a comment's post (in the replay), a label's add and a
   publish's `pulls/create`; and, reported, a comment's post refused without doing it (posted
   once on the next attempt).

The example's three skill runs fail "no agent configured" on the real side (their progress
comments and check run are written and settled; the agent is not the edge's cost); the dry side
records them as dry. Run: `python -m bench.github` (`--rounds N`, `--smoke`, `--work-dir DIR`);
`--smoke` runs one round and judges the calls and the retries, not the CPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._common import MIN_ROUNDS, BenchError, Row, alternate, collect, record, scratch
from bench.github_effects import (
    PATCH_VALUES,
    after_502,
    intent,
    perform,
    publish_after_502,
    seed_effects,
    settled_runs,
)
from bench.github_ledger import EFFECT_ROWS, Ledger, Performed
from bench.github_limits import RETRY_EXTRA
from bench.github_report import Verdicts, calls_table, retry_line
from holon.cli.serve_cmd import _facts
from holon.controller.policy import Policy, load_policy
from holon.github.client import GitHubConfig, make_client
from holon.github.publish_handler import publish_handlers
from holon.serve.edge import GitHubEdge, github_edge
from holon.serve.github_hooks import GitHubHooks
from holon.serve.serve import Serve, ServeOptions

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples/serve"
REPO = "Codertocat/Hello-World"  # the repository the example's payloads name
TOKEN = "ghs_" + "b" * 36  # a loopback fake's token
LOGIN = "github-actions[bot]"
TARGET_CPU_MS = 2.0  # extra CPU per handled event over the dry run
DEADLINE_SECONDS = 60.0  # the subprocess fake's own limit for starting

FAKE = """
import json
import sys
from bench.github import seed
from tests.support.github_fake import LoopbackGitHub

with LoopbackGitHub(token=sys.argv[1], repos=(sys.argv[2],)) as server:
    seed(server)
    print(server.url, flush=True)
    sys.stdin.read()  # until the benchmark closes it
    print(len(server.calls), len(server.violations), flush=True)
    # The requests as they arrived, for the client floor (the same requests, no Holon).
    sent = [[c.method, c.path, c.query, c.body.decode()] for c in server.calls]
    print(json.dumps(sent), flush=True)
"""


def seed(server: Any) -> None:
    """What the example's deliveries name, as its facts.json says it: issue 1 (the bug), PR 2
    (Holon's branch `holon/issue-1` at the head the facts give), issue 3 (the outsider's), and
    Codertocat an admin (asked as a COLLABORATOR on PR 2)."""
    repo = server.state.repos[REPO]
    repo.add_issue("Spelling error in the README file", user="Codertocat")
    facts = json.loads((EXAMPLE / "facts.json").read_text())
    pull_facts = facts["pulls"][f"{REPO}#2"]
    head, branch = pull_facts["head_sha"], pull_facts["head_ref"]
    # The payloads' head commit, held under the id they give (the check run is on it).
    repo.objects[head] = repo.objects[repo.commit("fix", repo.tree({}), [repo.refs["heads/main"]])]
    repo.refs[f"heads/{branch}"] = head
    repo.add_pull("Update the README with new information", head=branch)
    repo.add_issue("A question from outside", user="outsider")
    repo.permissions.update(facts["permissions"][REPO])


def environment(url: str) -> dict[str, str]:
    return {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": url,
        "HOLON_GITHUB_LOGIN": LOGIN,
        "HOLON_GITHUB_WRITE_SPACING": "0",
    }


@dataclass
class Run:
    events: int
    code: int
    cpu: float
    results: list[dict[str, Any]] = field(default_factory=list)


def _clock() -> datetime:
    return datetime.now(UTC)


def _no_wait(wait: Any) -> None:
    raise BenchError(f"the GitHub client waited ({wait.reason}): the fake should never say so")


def make_edge(url: str, policy: Policy | None = None) -> GitHubEdge:
    settings = (policy or load_policy(None)).settings
    return github_edge(environment(url), REPO, clock=_clock, on_wait=_no_wait, settings=settings)


def real_side(url: str, runs: Path, ledger: Ledger | None = None) -> dict[str, Any]:
    """Serve's GitHub parts as `holon serve` wires them (holon/cli/serve_cmd.py), over one
    edge; with a ledger, every call they make is charged."""
    policy = load_policy(None)  # read once for the edge and serve, as `holon serve` does
    edge = make_edge(url, policy)
    handlers: Mapping[str, Any] = edge.handlers()
    if ledger is not None:
        handlers = ledger.handlers(handlers)
        ledger.facts(edge.facts)
    hooks = GitHubHooks(edge.scope, edge.facts, run_url=None, note=_failed_write)
    hosted = publish_handlers(edge.config, REPO, runs, _clock, client=edge.client)
    parts = {"facts": edge.facts, "github": handlers, "hooks": hooks, "hosted": hosted}
    return {**parts, "policy": policy}


NOTES: list[str] = []  # the hooks' failed writes (a pass goes on; the bench must not)


def _failed_write(note: str) -> None:
    NOTES.append(note)


def run_serve(state: Path, real: Mapping[str, Any] | None) -> Run:
    """One replay of the example, timed in CPU seconds of this process (open to close)."""
    options = ServeOptions(
        state_dir=state,
        replay=[EXAMPLE / "replay.ndjson"],
        dry_run=real is None,
        once=True,
        repo=REPO,
        checkpoint_seconds=3600,
    )
    start = time.process_time()
    parts = real or {"facts": _facts(str(EXAMPLE / "facts.json"))}
    serve = Serve(options, **parts)
    serve.open()
    code = serve.run()
    serve.close()
    cpu = time.process_time() - start
    if serve.failed or NOTES:
        raise BenchError(f"serve failed inside Holon on {serve.failed}: {NOTES}")
    lines = (state / "actions.ndjson").read_text().splitlines()
    return Run(serve.events, code, cpu, [json.loads(line) for line in lines])


def _github_results(run: Run) -> list[dict[str, Any]]:
    return [r for r in run.results if r["type"] in EFFECT_ROWS]


def check_real(run: Run, dry: Run) -> None:
    """The real side did its job: the same events and decisions, every GitHub effect done."""
    if run.events != dry.events:
        raise BenchError(f"real side handled {run.events} events, dry side {dry.events}")
    failed = [r for r in _github_results(run) if r["status"] != "succeeded"]
    if failed or not _github_results(run):
        raise BenchError(f"GitHub effects did not succeed: {failed or 'none performed'}")
    decided = sorted((r["type"], r["subject"]) for r in run.results if r["attempt"] == 1)
    expected = sorted((r["type"], r["subject"]) for r in dry.results if r["attempt"] == 1)
    if decided != expected:
        raise BenchError(f"the live facts decided {decided}, the example's facts {expected}")


@contextmanager
def fake_process(sent: list[Sent] | None = None) -> Iterator[str]:
    """A seeded loopback GitHub in a subprocess (its CPU is not this process's); its URL. The
    requests it received are appended to `sent` when it stops."""
    proc = subprocess.Popen(
        [sys.executable, "-c", FAKE, TOKEN, REPO],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert proc.stdout is not None
        assert proc.stdin is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise BenchError(f"the loopback fake did not start: {url!r}")
        yield url
        proc.stdin.close()
        summary = proc.stdout.readline().split()
        received = json.loads(proc.stdout.readline() or "[]")
        if sent is not None:
            sent.extend(Sent(m, path, query, body) for m, path, query, body in received)
        proc.wait(timeout=DEADLINE_SECONDS)
        if len(summary) != 2 or summary[1] != "0":
            raise BenchError(f"the fake saw requests GitHub would not answer: {summary}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


@dataclass(frozen=True)
class Sent:
    """One request the fake received: what the client floor sends again."""

    method: str
    path: str  # below the API root, without the query
    query: dict[str, list[str]]
    body: str


def send_bare(url: str, requests_: list[Sent]) -> float:
    """CPU seconds of the client alone: a client made as the edge makes its own (`make_client`,
    same configuration) sends `requests_`, in order, with no Holon logic around them."""
    start = time.process_time()
    config = GitHubConfig.from_env(environment(url))
    requester = make_client(config, on_wait=_no_wait).requester
    for one in requests_:
        query = {k: v[0] for k, v in one.query.items()} or None
        body = json.loads(one.body) if one.body else None
        status, _, _ = requester.requestJson(one.method, f"{url}{one.path}", query, None, body)
        if status >= 500:
            raise BenchError(f"the client floor's {one.method} {one.path} got {status}")
    return time.process_time() - start


@dataclass(frozen=True)
class Cpu:
    dry: list[float]
    real: list[float]
    floor: list[float]  # the same requests as `real`, sent by the bare client
    events: int
    effects: int
    calls: int  # requests per replay


def cpu_phase(work: Path, rounds: int) -> Cpu:
    counter = iter(range(10**6))
    floors: list[float] = []
    calls: list[int] = []

    def dry(_: int) -> float:
        return run_serve(work / f"dry-{next(counter)}", None).cpu

    def real(_: int) -> float:
        sent: list[Sent] = []
        with fake_process(sent) as url:
            number = next(counter)
            start = time.process_time()
            parts = real_side(url, work / f"runs-{number}")  # the edge: part of the cost
            made = time.process_time() - start
            run = run_serve(work / f"real-{number}", parts)
        check_real(run, reference)
        # Side by side: the very requests this round made, on a fresh fake, by a bare client.
        with fake_process() as url:
            floors.append(send_bare(url, sent))
        calls.append(len(sent))
        return run.cpu + made

    reference = run_serve(work / "warm-dry", None)  # untimed warm-up and check of each side
    with fake_process() as url:
        check_real(run_serve(work / "warm-real", real_side(url, work / "runs-warm")), reference)
    print(
        f"CPU seconds, {rounds} alternating rounds (baseline: dry run; holon: GitHub via the edge)"
    )
    dry_s, real_s = alternate(rounds, dry, real)
    effects = len(_github_results(reference))
    return Cpu(dry_s, real_s, floors, reference.events, effects, max(calls))


def replay_calls(work: Path) -> tuple[list[Performed], int, int]:
    """Two replays on one in-process fake; every call must be charged to something."""
    from tests.support.github_fake import LoopbackGitHub

    events = 0
    with LoopbackGitHub(token=TOKEN, repos=(REPO,)) as server:
        seed(server)
        ledger = Ledger(server)
        with ledger.hooks():
            for number, label in enumerate(("replay 1", "replay 2")):
                ledger.label = label
                parts = real_side(server.url, work / "calls-runs", ledger)
                events += run_serve(work / f"calls-{number}", parts).events
        server.assert_clean()
        if ledger.unattributed():
            raise BenchError(f"{ledger.unattributed()} calls were made outside any effect")
        return ledger.rows, events, len(server.calls)


def effect_calls(work: Path) -> tuple[list[Performed], int, Path, str, dict[str, bytes]]:
    """Every other effect, twice each, on a fresh fake."""
    from tests.support.github_fake import LoopbackGitHub

    runs, head, files = settled_runs(work / "effects")
    with LoopbackGitHub(token=TOKEN, repos=(REPO,)) as server:
        seed_effects(server, REPO, head, files)
        ledger = Ledger(server)
        perform(make_edge(server.url), ledger, runs, head)
        server.assert_clean()
        if ledger.unattributed():
            raise BenchError(f"{ledger.unattributed()} calls were made outside any effect")
        return ledger.rows, len(server.calls), runs, head, files


def retry_phase(work: Path, runs: Path, head: str, files: dict[str, bytes]) -> bool:
    """A 502 after GitHub did it, on a comment's post, a label's add and a publish's PR; and a
    comment's post refused without being done (reported: it is posted on the next attempt)."""
    from tests.support.github_fake import LoopbackGitHub

    print()
    print("retry: a write answered 502 (every attempt of the retried effect)")
    comment = intent(REPO, "comment", "issue", 1, {"body": "Bench.", "kind": "status"})
    label = intent(REPO, "label", "issue", 1, {"label": "triage"})
    cases = [
        ("comment post, done", "comment", "issues/create-comment", comment, True),
        ("comment post, not done", "comment", "issues/create-comment", comment, False),
        ("label add, done", "label", "issues/add-labels", label, True),
        ("publish's pulls/create, done", "publish", "pulls/create", None, True),
    ]
    ok = True
    for what, name, operation, action, done in cases:
        with LoopbackGitHub(token=TOKEN, repos=(REPO,)) as server:
            seed_effects(server, REPO, head, files)
            edge, ledger = make_edge(server.url), Ledger(server)
            if action is None:
                publish_after_502(edge, server, ledger, runs)
            else:
                after_502(edge, server, ledger, name, operation, action, done=done)
            ok &= retry_line(what, ledger.rows, operation, judged=done)
            mine = [c for c in server.state.repos[REPO].comments.values() if c.user == LOGIN]
            pulls = [
                i for i in server.state.repos[REPO].issues.values() if i.pull and i.user == LOGIN
            ]
            if len(mine) > 1 or len(pulls) > 1:
                print("    DUPLICATED: the write was done twice")
                ok = False
            server.assert_clean()
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.github", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="one round, do not judge the CPU")
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    rounds = 1 if args.smoke else max(args.rounds, MIN_ROUNDS)
    verdicts = Verdicts()
    try:
        with scratch("holon-bench-github-", args.work_dir) as tmp:
            work = Path(tmp)
            cpu = cpu_phase(work, rounds)
            replayed, replay_events, replay_total = replay_calls(work)
            performed, effects_total, runs, head, files = effect_calls(work)
            print()
            print(
                f"GitHub calls ({replay_events} events replayed: {replay_total} calls; "
                f"other effects: {effects_total} calls)"
            )
            within = calls_table(replayed + performed, PATCH_VALUES)
            print(f"  per handled event (replay): {replay_total / replay_events:.2f} calls")
            retried = retry_phase(work, runs, head, files)
    except BenchError as exc:
        print(f"bench.github: could not run: {exc}", file=sys.stderr)
        return 2
    events = cpu.events
    dry_ms = statistics.median(cpu.dry) / events * 1000
    real_ms = statistics.median(cpu.real) / events * 1000
    floor_ms = statistics.median(cpu.floor) / events * 1000
    extra = real_ms - dry_ms
    own = extra - floor_ms
    print()
    print(f"CPU per handled event ({events} events, median of {rounds} rounds)")
    print(f"  dry run             {dry_ms:7.3f} ms")
    print(f"  GitHub via the edge {real_ms:7.3f} ms")
    print(f"  difference          {extra:7.3f} ms (all of it: Holon and the HTTP client)")
    print(
        f"  of which the client {floor_ms:7.3f} ms (the same {cpu.calls} requests sent by a "
        "bare PyGithub client, no Holon)"
    )
    print(f"  the pass itself     {own:7.3f} ms (target < {TARGET_CPU_MS} ms)")
    print(f"  ({extra * events / cpu.effects:.2f} ms per GitHub effect, {cpu.effects} in {events})")
    print()
    verdicts.judge("no effect uses more calls than documented", within)
    verdicts.judge(f"a retried effect costs at most {RETRY_EXTRA} extra look-up", retried)
    target = f"the pass itself adds < {TARGET_CPU_MS} ms CPU per event over the dry run"
    verdicts.judge(target, None if args.smoke else own < TARGET_CPU_MS)
    record(
        Row(
            "GitHub edge: the pass's own CPU per event",
            f"{real_ms:.2f} ms",
            f"dry {dry_ms:.2f} + client {floor_ms:.2f} ms",
            f"+{own:.2f} ms",
            f"< +{TARGET_CPU_MS:g} ms",
            None if args.smoke else own < TARGET_CPU_MS,
        )
    )
    record(Row("GitHub calls per effect", "-", "docs/github.md", "-", "within", within))
    record(Row("GitHub: a retried effect's extra look-ups", "-", "-", "-", "<= 1", retried))
    return verdicts.code()


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
