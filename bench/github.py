"""Benchmark: the GitHub edge's API economy and CPU cost, replaying `examples/serve/`.

Target (from the GitHub-edge issue): replaying `examples/serve/` with GitHub effects performed
for real against the loopback GitHub fake, no effect uses more calls than docs/github.md
documents ("Calls per effect"), a retried effect (a write answered 502) costs at most one extra
look-up, and acting on GitHub adds under 2 ms of CPU per handled event over the dry run.

Three phases, all loopback, bounded and self-stopping:

1. CPU, side by side: `Serve` in this process over the replay, alternating `--dry-run` and the
   real edge (built as `holon serve` builds it: `holon.serve.edge.github_edge` from an
   environment naming the fake), each round on a fresh state directory and, for the real side, a
   fresh fake seeded the same way. The fake runs in a subprocess so its CPU is not counted:
   `time.process_time()` of this process is serve plus the GitHub client, nothing else.
2. Calls: the same real replay against a fake in this process, every effect's calls taken from
   the fake's call log around the handler that performed it, printed per effect beside the
   documented maximum. The replay runs twice on the same fake (a fresh state directory the
   second time): first the comments are posted, then found again by their marker.
3. Retry: the first `issues/create-comment` answered 502, once after doing it (GitHub did it, the
   answer was lost) and once without doing it; the retried effect may cost one extra look-up
   (the comments listed again), and exactly one comment is left on the issue either way.

The example's replay decides three skill runs (`run_skill`). No agent is configured, so on the
real side they fail "no agent configured" (on both attempts) and make no GitHub call; the dry side
records them as dry. Running an agent would add processes and the local runtime's work, which is
not the edge's cost. Run: `python -m bench.github` (`--rounds N`, `--smoke`, `--work-dir DIR`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._common import MIN_ROUNDS, BenchError, alternate
from holon.cli.serve_cmd import _facts
from holon.controller.policy import load_policy
from holon.executor.result import ActionResult
from holon.intent import ActionIntent
from holon.serve.edge import github_edge
from holon.serve.serve import Serve, ServeOptions

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples/serve"
REPO = "Codertocat/Hello-World"  # the repository the example's payloads name
TOKEN = "ghs_" + "b" * 36  # a loopback fake's token
LOGIN = "github-actions[bot]"
TARGET_CPU_MS = 2.0  # extra CPU per handled event over the dry run
DEADLINE_SECONDS = 60.0  # the subprocess fake's own limit for starting

# docs/github.md, "## Effects" > "### Calls per effect": the most calls one attempt of each
# effect makes in a one-page thread, and what a 5xx on the write may add (one look-up).
DOCUMENTED_MAX = {
    "comment": 2,  # list, then post or edit (1 when it already says exactly this)
    "label": 2,  # read the issue, add
    "unlabel": 2,  # read the issue, remove
    "close_issue": 2,  # read, close
    "request_review": 2,  # read the pull request, request
    "dispatch": 1,
}
RETRY_EXTRA = 1  # "3 after a 5xx on the post (list, post, list)": the comments listed again

FAKE = """
import sys
from bench.github import seed
from tests.support.github_fake import LoopbackGitHub

with LoopbackGitHub(token=sys.argv[1], repos=(sys.argv[2],)) as server:
    seed(server)
    print(server.url, flush=True)
    sys.stdin.read()  # until the benchmark closes it
    print(len(server.calls), len(server.violations), flush=True)
"""


def seed(server: Any) -> None:
    """What the example's deliveries name: issue 1 (the bug), PR 2 (Holon's branch `holon/issue-1`
    at the head the facts give) and issue 3 (the outsider's)."""
    repo = server.state.repos[REPO]
    repo.add_issue("Spelling error in the README file", user="Codertocat")
    facts = json.loads((EXAMPLE / "facts.json").read_text())["pulls"][f"{REPO}#2"]
    pull = repo.add_pull("Update the README with new information", head=facts["head_ref"])
    assert pull.pull is not None
    pull.pull.head_sha = facts["head_sha"]
    repo.add_issue("A question from outside", user="outsider")


def environment(url: str) -> dict[str, str]:
    return {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": url,
        "HOLON_GITHUB_LOGIN": LOGIN,
        "HOLON_GITHUB_WRITE_SPACING": "0",
    }


@dataclass
class Performed:
    """One attempt of a GitHub effect and the calls the fake recorded during it."""

    effect: str
    kind: str
    attempt: int
    status: str
    calls: list[tuple[str, str | None]]


@dataclass
class Run:
    events: int
    code: int
    cpu: float
    results: list[dict[str, Any]] = field(default_factory=list)


def _clock() -> datetime:
    return datetime.now(UTC)


def run_serve(state: Path, github: Mapping[str, Any] | None) -> Run:
    """One replay of the example, timed in CPU seconds of this process (open to close)."""
    options = ServeOptions(
        state_dir=state,
        replay=[EXAMPLE / "replay.ndjson"],
        dry_run=github is None,
        once=True,
        repo=REPO,
        checkpoint_seconds=3600,
    )
    start = time.process_time()
    serve = Serve(options, facts=_facts(str(EXAMPLE / "facts.json")), github=github)
    serve.open()
    code = serve.run()
    serve.close()
    cpu = time.process_time() - start
    if serve.failed:
        raise BenchError(f"serve failed inside Holon on {serve.failed}")
    lines = (state / "actions.ndjson").read_text().splitlines()
    return Run(serve.events, code, cpu, [json.loads(line) for line in lines])


def edge_handlers(url: str) -> dict[str, Any]:
    settings = load_policy(None).settings
    edge = github_edge(environment(url), REPO, clock=_clock, on_wait=_no_wait, settings=settings)
    return edge.handlers()


def _no_wait(wait: Any) -> None:
    raise BenchError(f"the GitHub client waited ({wait.reason}): the fake should never say so")


def recording(handlers: Mapping[str, Any], server: Any, into: list[Performed]) -> dict[str, Any]:
    """The edge's handlers, each attempt's calls (the fake's log around it) kept in `into`."""

    def wrap(name: str, handler: Callable[[ActionIntent, int], ActionResult]) -> Any:
        def perform(intent: ActionIntent, attempt: int) -> ActionResult:
            before = len(server.calls)
            result = handler(intent, attempt)
            calls = [(c.method, c.operation) for c in server.calls[before:]]
            kind = str(intent.args.get("kind") or "") if name == "comment" else ""
            into.append(Performed(name, kind, attempt, result.status, calls))
            return result

        return perform

    return {name: wrap(name, handler) for name, handler in handlers.items()}


def _github_results(run: Run) -> list[dict[str, Any]]:
    return [r for r in run.results if r["type"] in DOCUMENTED_MAX]


def check_real(run: Run, dry: Run) -> None:
    """The real side did its job: the same events, every GitHub effect succeeded."""
    if run.events != dry.events:
        raise BenchError(f"real side handled {run.events} events, dry side {dry.events}")
    failed = [r for r in _github_results(run) if r["status"] != "succeeded"]
    if failed or not _github_results(run):
        raise BenchError(f"GitHub effects did not succeed: {failed or 'none performed'}")
    if len(_github_results(run)) != len(_github_results(dry)):
        raise BenchError("the real side performed other GitHub effects than the dry side decided")


@contextmanager
def fake_process() -> Iterator[str]:
    """A seeded loopback GitHub in a subprocess (its CPU is not this process's); its URL."""
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


def cpu_phase(work: Path, rounds: int) -> tuple[list[float], list[float], int, int]:
    counter = iter(range(10**6))

    def dry(_: int) -> float:
        return run_serve(work / f"dry-{next(counter)}", None).cpu

    def real(_: int) -> float:
        with fake_process() as url:
            start = time.process_time()
            handlers = edge_handlers(url)  # the client and repository handle: part of the cost
            made = time.process_time() - start
            run = run_serve(work / f"real-{next(counter)}", handlers)
        check_real(run, reference)
        return run.cpu + made

    reference = run_serve(work / "warm-dry", None)  # untimed warm-up and check of each side
    with fake_process() as url:
        check_real(run_serve(work / "warm-real", edge_handlers(url)), reference)
    print(
        f"CPU seconds, {rounds} alternating rounds (baseline: dry run; holon: GitHub via the edge)"
    )
    dry_s, real_s = alternate(rounds, dry, real)
    return dry_s, real_s, reference.events, len(_github_results(reference))


def calls_phase(work: Path) -> tuple[list[Performed], int, int]:
    """Two replays on one in-process fake; every call must belong to an effect."""
    from tests.support.github_fake import LoopbackGitHub

    performed: list[Performed] = []
    events = 0
    with LoopbackGitHub(token=TOKEN, repos=(REPO,)) as server:
        seed(server)
        for number, label in enumerate(("first", "again")):
            start = len(performed)
            handlers = recording(edge_handlers(server.url), server, performed)
            run = run_serve(work / f"calls-{number}", handlers)
            events += run.events
            for item in performed[start:]:
                item.kind = f"{item.kind}, {label}" if item.kind else label
        server.assert_clean()
        total = len(server.calls)
    attributed = sum(len(p.calls) for p in performed)
    if attributed != total:
        raise BenchError(f"{total - attributed} calls were made outside any effect")
    if any(p.status != "succeeded" for p in performed):
        raise BenchError(
            f"a GitHub effect failed: {[p for p in performed if p.status != 'succeeded']}"
        )
    return performed, events, total


def calls_table(performed: list[Performed], events: int, total: int) -> bool:
    groups: dict[tuple[str, str], list[Performed]] = defaultdict(list)
    for item in performed:
        groups[(item.effect, item.kind)].append(item)
    print()
    print(f"GitHub calls by effect ({events} events handled, {total} calls in all)")
    header = ("effect", "effects", "calls", "calls/effect", "documented max", "")
    rows = [header]
    ok = True
    for (effect, kind), items in groups.items():
        calls = sum(len(i.calls) for i in items)
        worst = max(len(i.calls) for i in items)
        within = worst <= DOCUMENTED_MAX[effect]
        ok &= within
        name = f"{effect} ({kind})" if kind else effect
        limit = str(DOCUMENTED_MAX[effect])
        mark = "ok" if within else "OVER"
        rows.append((name, str(len(items)), str(calls), f"{calls / len(items):.1f}", limit, mark))
    rows.append(("per handled event", str(events), str(total), f"{total / events:.2f}", "", ""))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for row in rows:
        print("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    return ok


def retry_phase(work: Path) -> bool:
    """A 502 on the first comment's post, with and without GitHub having done it."""
    from tests.support.github_fake import LoopbackGitHub

    print()
    print("retry: the first issues/create-comment answered 502")
    ok = True
    for done in (True, False):
        performed: list[Performed] = []
        with LoopbackGitHub(token=TOKEN, repos=(REPO,)) as server:
            seed(server)
            server.fail("issues/create-comment", 502, times=1, done=done)
            handlers = recording(edge_handlers(server.url), server, performed)
            run_serve(work / f"retry-{done}", handlers)
            server.assert_clean()
            held = [c for c in server.state.repos[REPO].comments.values() if c.user == LOGIN]
        first = [p for p in performed if p.effect == "comment"]
        hit = [p for p in first if p.kind == first[0].kind]
        attempt = hit[0]
        extra = attempt.calls[DOCUMENTED_MAX["comment"] :]
        lookups = all(method == "GET" for method, _ in extra)
        within = len(attempt.calls) <= DOCUMENTED_MAX["comment"] + RETRY_EXTRA and lookups
        issues = [c.issue for c in held]
        once = len(issues) == len(set(issues))  # one comment per subject, never two
        settled = hit[-1].status == "succeeded"
        ok &= within and once and settled
        how = "done, answer lost" if done else "not done"
        ops = ", ".join(f"{m} {o}" for m, o in attempt.calls)
        later = "".join(f"; attempt {p.attempt}: {len(p.calls)} calls" for p in hit[1:])
        print(
            f"  502 ({how}): attempt 1 made {len(attempt.calls)} calls ({ops}){later}; "
            f"{'one comment per subject' if once else 'DUPLICATE comments'}, "
            f"{'settled' if settled else 'NOT settled'}: {'ok' if within else 'OVER'}"
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.github", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="one round, do not judge")
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    rounds = 1 if args.smoke else max(args.rounds, MIN_ROUNDS)
    try:
        with tempfile.TemporaryDirectory(prefix="holon-bench-github-", dir=args.work_dir) as tmp:
            work = Path(tmp)
            dry_s, real_s, events, effects = cpu_phase(work, rounds)
            performed, call_events, total = calls_phase(work)
            within = calls_table(performed, call_events, total)
            retried = retry_phase(work)
    except BenchError as exc:
        print(f"bench.github: could not run: {exc}", file=sys.stderr)
        return 2
    dry_ms = statistics.median(dry_s) / events * 1000
    real_ms = statistics.median(real_s) / events * 1000
    extra = real_ms - dry_ms
    print()
    print(f"CPU per handled event ({events} events, median of {rounds} rounds)")
    print(f"  dry run             {dry_ms:7.3f} ms")
    print(f"  GitHub via the edge {real_ms:7.3f} ms")
    print(f"  difference          {extra:7.3f} ms (target < {TARGET_CPU_MS} ms)")
    print(f"  ({extra * events / effects:.2f} ms per GitHub effect, {effects} in {events} events)")
    if args.smoke:
        print("  result: NOT JUDGED (smoke run)")
        return 0
    passed = within and retried and extra < TARGET_CPU_MS
    print(f"  result: {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
