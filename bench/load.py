"""Load: `holon serve --listen` under 10,000 signed deliveries from 50 concurrent senders.

What is proved (issue 13, item 6), each judged PASS/FAIL:

- every delivery is answered 202 (accepted) or 503 with Retry-After (refused): no other status,
  no connection error, no 503 without Retry-After;
- every refused one, sent once more after its Retry-After (GitHub itself would not retry: an
  operator redelivers), is then accepted;
- exactly once: every accepted delivery id is in the events journal exactly once and decided
  exactly once (one line in the decisions journal, none "duplicate"), no action journaled twice,
  nothing journaled that was never accepted, nothing left in the inbox;
- memory flat: the serve's RSS (VmRSS, sampled every 0.5 s) over the last third of the run stays
  within `FLAT_MARGIN` (10%) of its maximum over the first third. The state is first warmed by a
  replay of 22,000 events (`--warm N`) that fills its bounded record sets (20,000 dedupe marks;
  2,000 settled intents, memories, closures), so what is judged is a long-running serve's steady
  state, not a fresh state filling up to its caps (which grows by design);
- the serve stops cleanly (SIGTERM, exit 0) and the whole run stays within its deadline.

Accept latency (send to 202, p50/p99), refusals, throughput and peak RSS are reported.

The serve is a real process (`python -m holon serve --listen 127.0.0.1:0 --dry-run`: built-in
policy decider, offline facts, no GitHub). The client is loopback only: bounded threads with
`http.client`, one connection per delivery as GitHub does, payloads built from GitHub's examples
(`tests/fixtures/octokit-webhooks/examples.json`) with distinct ids. It stops everything it
starts. Run: `python -m bench.load` (`--deliveries N`, `--concurrency C`, `--deadline S`,
`--warm N`, `--storm`: every comment on one issue, `--smoke`, `--work-dir DIR`). A refused
delivery is sent once more after Retry-After, paced so the serve never has more than
`RESEND_BACKLOG` accepted and undecided: as an operator redelivers, since GitHub never retries.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._common import BenchError, scratch
from holon.gateway.webhook import signature_for
from holon.serve.inbox import pending_count
from holon.state.journal import Journal

EXAMPLES = Path(__file__).resolve().parents[1] / "tests/fixtures/octokit-webhooks/examples.json"
SECRET = "bench-load-secret"  # noqa: S105 (a test secret for loopback only)
SECRET_ENV = "HOLON_BENCH_LOAD_SECRET"  # noqa: S105 (the variable's name, not a secret)
DEFAULT_DELIVERIES = 10_000
DEFAULT_CONCURRENCY = 50
DEFAULT_DEADLINE = 900.0
SAMPLE_SECONDS = 0.5
# Memory flat: max RSS of the last third <= max RSS of the first third * (1 + FLAT_MARGIN).
FLAT_MARGIN = 0.10
# Fewer samples than this in a third (a quick run) and flatness is reported, not judged.
MIN_SAMPLES_PER_THIRD = 10
# Per request: a stalled serve cannot hold a sender forever.
REQUEST_TIMEOUT = 60.0
# After the last answer: how long the serve may take to decide what it accepted.
CATCH_UP_SECONDS = 300.0
# The state's bounded record sets (holon.state.model): dedupe marks up to 20,000; settled
# intents, memories and closures up to 2,000 each. The warm-up fills them, so memory is judged
# at the steady state of a long-running serve, not while its state is still filling up.
DEFAULT_WARM = 22_000
WARM_MIXED = 9_000  # of the load's mix: 2,250 each of comments (intents), issues, PRs, suites
WARM_FIRST = 5_000_000  # its numbers and ids apart from the load's
# Re-sending the refused: no more than this many accepted and not yet decided at a time.
RESEND_BACKLOG = 200


@dataclass(frozen=True)
class Delivery:
    event: str
    delivery: str
    body: bytes


@dataclass(frozen=True)
class Answer:
    delivery: str
    status: int  # 0: no HTTP answer (connection error)
    seconds: float
    retry_after: str | None = None
    event_id: str | None = None  # the envelope id a 202 names
    error: str | None = None


@dataclass
class Criterion:
    name: str
    passed: bool | None  # None: reported, not judged
    detail: str


def make_deliveries(count: int, first: int = 0, *, storm: bool = False) -> list[Delivery]:
    """`count` distinct signed-to-be deliveries from GitHub's examples, four kinds in turn: a
    `/holon status` comment on its own issue, an opened issue, an opened pull request, a
    completed check suite. Every payload differs (ids, numbers from `first` on), so each is its
    own event on its own subject, never a duplicate. `storm`: every comment on one issue."""
    examples = {e["name"]: e["examples"] for e in json.loads(EXAMPLES.read_text())}
    comment = next(p for p in examples["issue_comment"] if p.get("action") == "created")
    issue = next(p for p in examples["issues"] if p.get("action") == "opened")
    pull = next(p for p in examples["pull_request"] if p.get("action") == "opened")
    suite = next(p for p in examples["check_suite"] if p.get("action") == "completed")
    made = []
    for i in range(first, first + count):
        kind = i % 4
        if kind == 0:
            payload = json.loads(json.dumps(comment))
            payload["comment"].update(id=10_000_000 + i, body="/holon status")
            if not storm:
                payload["issue"].update(number=1_000_000 + i, id=50_000_000 + i)
            event = "issue_comment"
        elif kind == 1:
            payload = json.loads(json.dumps(issue))
            payload["issue"].update(number=2_000_000 + i, id=20_000_000 + i)
            event = "issues"
        elif kind == 2:
            payload = json.loads(json.dumps(pull))
            payload["pull_request"].update(number=3_000_000 + i, id=30_000_000 + i)
            payload["number"] = 3_000_000 + i
            event = "pull_request"
        else:
            payload = json.loads(json.dumps(suite))
            payload["check_suite"]["id"] = 40_000_000 + i
            event = "check_suite"
        made.append(Delivery(event, str(uuid.uuid4()), json.dumps(payload).encode()))
    return made


def write_warm_up(path: Path, count: int) -> None:
    """`count` distinct deliveries for `holon serve --once --replay`: small `star` events first
    (dedupe marks), then up to `WARM_MIXED` of the load's own mix (memories, settled intents)."""
    mixed = min(count, WARM_MIXED)
    with path.open("w") as out:
        for i in range(count - mixed):
            payload = {
                "action": "created",
                "starred_at": f"2026-01-01T00:00:00Z#{i}",
                "repository": {"full_name": "Codertocat/Hello-World"},
                "sender": {"login": f"warm{i}"},
            }
            out.write(json.dumps({"event": "star", "delivery": f"warm-{i}", "payload": payload}))
            out.write("\n")
        for item in make_deliveries(mixed, first=WARM_FIRST):
            line = {"event": item.event, "delivery": f"warm-{item.delivery}"}
            out.write(json.dumps({**line, "payload": json.loads(item.body)}) + "\n")


def warm_up(state: Path, count: int, work: Path, deadline: float) -> float:
    """Bring the state to where a long-running serve's is: its bounded record sets full."""
    replay = work / "warm-up.ndjson"
    write_warm_up(replay, count)
    argv = [sys.executable, "-m", "holon", "serve", "--state-dir", str(state), "--dry-run"]
    argv += ["--once", "--replay", str(replay)]
    began = time.perf_counter()
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=max(1.0, deadline - time.monotonic()),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BenchError("the warm-up replay ran past the deadline") from None
    finally:
        replay.unlink()
    if done.returncode != 0:
        raise BenchError(f"the warm-up replay exited {done.returncode}: {done.stderr[-300:]}")
    return time.perf_counter() - began


def post(port: int, item: Delivery) -> Answer:
    """One delivery on a new connection, as GitHub sends it."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/bench",
        "X-GitHub-Event": item.event,
        "X-GitHub-Delivery": item.delivery,
        "X-Hub-Signature-256": signature_for(item.body, SECRET),
    }
    began = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
    try:
        conn.request("POST", "/webhook", body=item.body, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        seconds = time.perf_counter() - began
    except (OSError, http.client.HTTPException) as exc:
        return Answer(item.delivery, 0, time.perf_counter() - began, error=type(exc).__name__)
    finally:
        conn.close()
    event_id = None
    if response.status == 202:
        with contextlib.suppress(ValueError, AttributeError):
            event_id = json.loads(raw).get("id")
    return Answer(
        item.delivery, response.status, seconds, response.getheader("Retry-After"), event_id
    )


def send_all(
    port: int,
    items: list[Delivery],
    concurrency: int,
    stop_at: float,
    gate: Callable[[], None] | None = None,
    on_answer: Callable[[Answer], None] | None = None,
) -> list[Answer]:
    """`concurrency` senders, each posting the next delivery once its last answer came (and
    `gate` let it); none starts a delivery after `stop_at`."""
    answers: list[Answer] = []
    lock = threading.Lock()
    queue: Iterator[Delivery] = iter(items)

    def sender() -> None:
        while time.monotonic() < stop_at:
            with lock:
                item = next(queue, None)
            if item is None:
                return
            if gate is not None:
                gate()
            answer = post(port, item)
            if on_answer is not None:
                on_answer(answer)
            with lock:
                answers.append(answer)

    threads = [threading.Thread(target=sender, daemon=True) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, stop_at - time.monotonic()) + REQUEST_TIMEOUT)
    with lock:
        return list(answers)


class RssSampler:
    """The serve's VmRSS every `SAMPLE_SECONDS` on a thread, in KiB, with the time taken."""

    def __init__(self, pid: int) -> None:
        self.status = Path(f"/proc/{pid}/status")
        self.samples: list[tuple[float, int]] = []
        self.peak_kib = 0
        self._stop = threading.Event()
        self._began = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> None:
        try:
            text = self.status.read_text()
        except OSError:
            return  # the process is gone
        rss = re.search(r"VmRSS:\s+(\d+)", text)
        hwm = re.search(r"VmHWM:\s+(\d+)", text)
        if rss:
            self.samples.append((time.monotonic() - self._began, int(rss[1])))
        if hwm:
            self.peak_kib = max(self.peak_kib, int(hwm[1]))

    def _run(self) -> None:
        self._read()
        while not self._stop.wait(SAMPLE_SECONDS):
            self._read()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._read()
        self._stop.set()
        self._thread.join()


class DecisionTail:
    """The event ids of the decisions journal, read as it grows (following a rotation)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.event_ids: set[str] = set()
        self._handle: Any = None
        self._inode = -1
        self._rest = b""

    def poll(self) -> None:
        if self._handle is None:
            try:
                self._handle = self.path.open("rb")
            except FileNotFoundError:
                return
            self._inode = os.fstat(self._handle.fileno()).st_ino
        self._drain()
        try:
            current = self.path.stat().st_ino
        except FileNotFoundError:
            return
        if current != self._inode:  # rotated: the old file is complete, go on in the new one
            self._drain()
            self._handle.close()
            self._handle, self._rest = None, b""
            self.poll()

    def _drain(self) -> None:
        data = self._rest + self._handle.read()
        *lines, self._rest = data.split(b"\n")
        for line in lines:
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry.get("event_id"), str):
                    self.event_ids.add(entry["event_id"])

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()


def _port(proc: subprocess.Popen[str], deadline: float) -> int:
    assert proc.stdout is not None
    # A serve that dies before listening closes its stdout: readline returns "".
    line = proc.stdout.readline() if time.monotonic() < deadline else ""
    found = re.search(r"127\.0\.0\.1:(\d+)/", line)
    if found is None:
        raise BenchError(f"the serve did not say where it listens: {line.strip()!r}")
    return int(found[1])


def _stop(proc: subprocess.Popen[str], timeout: float) -> float | None:
    """SIGTERM, then wait; the seconds it took, or None when it had to be killed."""
    began = time.monotonic()
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return time.monotonic() - began


def _seconds(retry_after: str | None) -> bool:
    return retry_after is not None and retry_after.isascii() and retry_after.isdigit()


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def flatness(samples: list[tuple[float, int]]) -> tuple[int, int, int]:
    """Max RSS (KiB) of the first and the last third of the samples, and the samples a third."""
    third = len(samples) // 3
    if third == 0:
        return 0, 0, 0
    first = max(kib for _, kib in samples[:third])
    last = max(kib for _, kib in samples[-third:])
    return first, last, third


@dataclass
class Run:
    answers: list[Answer] = field(default_factory=list)
    resent: list[Answer] = field(default_factory=list)
    send_seconds: float = 0.0
    catch_up_seconds: float = 0.0
    caught_up: bool = False
    stop_seconds: float | None = None
    exit_code: int | None = None
    samples: list[tuple[float, int]] = field(default_factory=list)
    peak_kib: int = 0
    timed_out: bool = False
    log_lines: int = 0
    warm_seconds: float = 0.0


class Pacer:
    """Holds a re-sender while the serve has `RESEND_BACKLOG` accepted deliveries not yet
    decided: each refused delivery is sent once more, when the serve has room for it."""

    def __init__(self, tail: DecisionTail, stop_at: float) -> None:
        self.tail = tail
        self.stop_at = stop_at
        self.accepted: set[str] = set()
        self._lock = threading.Lock()

    def answered(self, answer: Answer) -> None:
        if answer.event_id is not None:
            with self._lock:
                self.accepted.add(answer.event_id)

    def wait(self) -> None:
        while time.monotonic() < self.stop_at:
            with self._lock:
                self.tail.poll()
                if len(self.accepted - self.tail.event_ids) < RESEND_BACKLOG:
                    return
            time.sleep(0.05)


def run_load(
    items: list[Delivery], concurrency: int, state: Path, log: Path, deadline: float
) -> Run:
    """Start the serve, send everything, re-send the refused once after Retry-After (paced),
    wait until every accepted delivery is decided, stop the serve. `deadline` is a
    time.monotonic(); the serve's stderr goes to `log`."""
    run = Run()
    env = {**os.environ, SECRET_ENV: SECRET}
    argv = [sys.executable, "-m", "holon", "serve", "--state-dir", str(state), "--dry-run"]
    argv += ["--listen", "127.0.0.1:0", "--secret-env", SECRET_ENV]
    with log.open("w") as stderr:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
    sampler = RssSampler(proc.pid)
    tail = DecisionTail(state / "decisions.ndjson")
    try:
        port = _port(proc, deadline)
        sampler.start()
        began = time.perf_counter()
        run.answers = send_all(port, items, concurrency, deadline)
        run.send_seconds = time.perf_counter() - began
        refused = {a.delivery for a in run.answers if a.status == 503}
        if refused:
            # As an operator redelivering what the serve asked to wait for: after Retry-After,
            # each once, no faster than the serve decides (GitHub itself never retries).
            waits = [int(a.retry_after or 0) for a in run.answers if _seconds(a.retry_after)]
            time.sleep(min(max(waits, default=1), max(0.0, deadline - time.monotonic())))
            pacer = Pacer(tail, deadline)
            again = [item for item in items if item.delivery in refused]
            run.resent = send_all(port, again, concurrency, deadline, pacer.wait, pacer.answered)
        accepted = {a.event_id for a in [*run.answers, *run.resent] if a.event_id}
        began = time.perf_counter()
        catch_up = min(deadline, time.monotonic() + CATCH_UP_SECONDS)
        while time.monotonic() < catch_up and proc.poll() is None:
            tail.poll()
            if accepted <= tail.event_ids:
                run.caught_up = True
                break
            time.sleep(0.2)
        run.catch_up_seconds = time.perf_counter() - began
    finally:
        tail.close()
        sampler.stop()
        run.stop_seconds = _stop(proc, timeout=max(30.0, min(120.0, deadline - time.monotonic())))
        run.exit_code = proc.returncode
    run.samples, run.peak_kib = sampler.samples, sampler.peak_kib
    run.timed_out = time.monotonic() > deadline
    with log.open("rb") as lines:
        run.log_lines = sum(1 for _ in lines)
    return run


def check_journals(run: Run, state: Path) -> list[Criterion]:
    """Exactly once, from the serve's own journals (every segment) and its inbox."""
    answered = [*run.answers, *run.resent]
    accepted = {a.delivery: a.event_id for a in answered if a.status == 202}
    events: Counter[str] = Counter()
    event_ids: dict[str, set[str]] = {}
    for entry in Journal(state / "events.ndjson").read():
        delivery = (entry.get("envelope") or {}).get("delivery")
        if isinstance(delivery, str) and not delivery.startswith("warm-"):
            events[delivery] += 1
            event_ids.setdefault(delivery, set()).add(entry["id"])
    lost = [d for d in accepted if events[d] == 0]
    twice = [d for d in accepted if events[d] > 1]
    unasked = [d for d in events if d not in accepted]
    wrong_id = [d for d, eid in accepted.items() if events[d] and event_ids[d] != {eid}]
    decided: Counter[str] = Counter()
    duplicates = 0
    wanted = {eid for eid in accepted.values() if eid}
    for entry in Journal(state / "decisions.ndjson").read():
        event_id = str(entry.get("event_id"))
        decided[event_id] += 1
        duplicates += event_id in wanted and entry.get("outcome") == "duplicate"
    undecided = [e for e in wanted if decided[e] == 0]
    decided_twice = [e for e in wanted if decided[e] > 1]
    actions = Counter(str(e.get("id")) for e in Journal(state / "actions.ndjson").read())
    actions_twice = [a for a, n in actions.items() if n > 1]
    kept = pending_count(state)

    def sample(items: list[str]) -> str:
        return f" e.g. {items[:3]}" if items else ""

    return [
        Criterion(
            "every accepted delivery journaled exactly once (none lost, none twice)",
            not lost and not twice and not wrong_id and bool(accepted),
            f"{len(accepted)} accepted, {sum(events.values())} journaled; lost {len(lost)}"
            f"{sample(lost)}, twice {len(twice)}{sample(twice)}, other id {len(wrong_id)}",
        ),
        Criterion(
            "nothing journaled that was not accepted",
            not unasked,
            f"{len(unasked)} journaled without a 202{sample(unasked)}",
        ),
        Criterion(
            "every accepted delivery decided exactly once",
            not undecided and not decided_twice and not duplicates,
            f"{sum(decided[e] for e in wanted)} decisions for {len(wanted)} events; undecided "
            f"{len(undecided)}, twice {len(decided_twice)}, 'duplicate' outcomes {duplicates}",
        ),
        Criterion(
            "no action journaled twice",
            not actions_twice,
            f"{sum(actions.values())} action lines, {len(actions_twice)} ids twice"
            f"{sample(actions_twice)}",
        ),
        Criterion("inbox empty after stop", kept == 0, f"{kept} deliveries left in the inbox"),
    ]


def judge(run: Run, state: Path, count: int) -> list[Criterion]:
    answers = run.answers
    statuses = Counter(a.status for a in answers)
    errors = Counter(a.error for a in answers if a.error)
    refused = [a for a in answers if a.status == 503]
    bare = [a for a in refused if not _seconds(a.retry_after)]
    other = {s: n for s, n in statuses.items() if s not in (202, 503)}
    resent_ok = sum(a.status == 202 for a in run.resent)
    first, last, third = flatness(run.samples)
    allowed = int(first * (1 + FLAT_MARGIN))
    flat: bool | None = last <= allowed if third >= MIN_SAMPLES_PER_THIRD else None
    return [
        Criterion(
            "every delivery sent and answered 202 or 503 + Retry-After",
            len(answers) == count and not other and not bare,
            f"{len(answers)}/{count} answered: {statuses[202]} accepted, {len(refused)} refused "
            f"(503), {len(bare)} of them without Retry-After; other statuses {other or 'none'}; "
            f"connection errors {dict(errors) or 'none'}",
        ),
        Criterion(
            "every refused delivery accepted when sent again after Retry-After",
            resent_ok == len(refused) and len(run.resent) == len(refused),
            f"{len(refused)} refused, {len(run.resent)} sent again, {resent_ok} accepted then",
        ),
        Criterion(
            "serve caught up: every accepted delivery decided before stop",
            run.caught_up,
            f"{run.catch_up_seconds:.1f} s after the last answer",
        ),
        *check_journals(run, state),
        Criterion(
            f"memory flat (last third's max <= first third's max + {FLAT_MARGIN:.0%})",
            flat,
            f"first third {first / 1024:.1f} MiB, last third {last / 1024:.1f} MiB "
            f"(allowed {allowed / 1024:.1f}), {len(run.samples)} samples every {SAMPLE_SECONDS} s"
            + ("" if flat is not None else "; too few samples to judge"),
        ),
        Criterion(
            "serve stopped cleanly (SIGTERM, exit 0)",
            run.stop_seconds is not None and run.exit_code == 0,
            f"exit {run.exit_code} after "
            + ("a kill" if run.stop_seconds is None else f"{run.stop_seconds:.1f} s"),
        ),
        Criterion("within the deadline", not run.timed_out, "self-stopping"),
    ]


def report(run: Run, count: int, concurrency: int) -> None:
    accepted = [a.seconds * 1000 for a in run.answers if a.status == 202]
    refused = [a.seconds * 1000 for a in run.answers if a.status == 503]
    rate = len(run.answers) / run.send_seconds if run.send_seconds else 0.0
    print(
        f"  sent {len(run.answers)} in {run.send_seconds:.1f} s ({rate:.0f} deliveries/s) at "
        f"concurrency {concurrency}; accepted {len(accepted)}, refused {len(refused)}"
    )
    print(
        f"  accept latency (send to 202): p50 {percentile(accepted, 50):.1f} ms, "
        f"p99 {percentile(accepted, 99):.1f} ms, max {max(accepted, default=0):.1f} ms"
    )
    if refused:
        print(f"  refusal latency (send to 503): p50 {percentile(refused, 50):.1f} ms")
    rss = [kib for _, kib in run.samples]
    if rss:
        # RSS over time in ten steps, for the eye; the flatness criterion uses every sample.
        step = max(1, len(run.samples) // 10)
        line = ", ".join(f"{t:.0f}s {kib / 1024:.0f}" for t, kib in run.samples[::step])
        print(f"  serve RSS (MiB) over time: {line}")
        print(f"  serve peak RSS (VmHWM) {run.peak_kib / 1024:.1f} MiB")
    print(f"  serve's stderr: {run.log_lines} lines")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.load", description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=DEFAULT_DELIVERIES)
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    parser.add_argument("--deadline", type=float, default=DEFAULT_DEADLINE, metavar="SECONDS")
    parser.add_argument(
        "--warm",
        type=int,
        default=None,
        metavar="N",
        help=f"events replayed into the state first (default {DEFAULT_WARM:,}; 0 in quick runs)",
    )
    parser.add_argument("--smoke", action="store_true", help="300 deliveries, concurrency 20")
    parser.add_argument(
        "--storm", action="store_true", help="every comment on one issue (a comment storm)"
    )
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    count, concurrency = (300, 20) if args.smoke else (args.deliveries, args.concurrency)
    quick = args.smoke or count < DEFAULT_DELIVERIES
    warm = args.warm if args.warm is not None else 0 if quick else DEFAULT_WARM
    if count < 1 or concurrency < 1 or args.deadline <= 0 or warm < 0:
        print("bench.load: --deliveries, --concurrency and --deadline must be positive")
        return 64
    deadline = time.monotonic() + args.deadline
    items = make_deliveries(count, storm=args.storm)
    print(
        f"bench.load: {count} signed deliveries, concurrency {concurrency}, loopback, "
        f"deadline {args.deadline:.0f} s; state warmed with {warm:,} events"
        + ("; every comment on one issue" if args.storm else "")
    )
    with scratch("bench-load-", args.work_dir) as work:
        state = Path(work) / "state"
        try:
            warmed = warm_up(state, warm, Path(work), deadline) if warm else 0.0
            run = run_load(items, concurrency, state, Path(work) / "serve.log", deadline)
        except BenchError as exc:
            print(f"bench.load: {exc}")
            return 2
        run.warm_seconds = warmed
        if warm:
            print(f"  warm-up: {warm:,} events replayed in {warmed:.1f} s")
        report(run, count, concurrency)
        criteria = judge(run, state, count)
    for criterion in criteria:
        verdict = {True: "PASS", False: "FAIL", None: "----"}[criterion.passed]
        print(f"  {verdict}  {criterion.name}: {criterion.detail}")
    failed = any(c.passed is False for c in criteria)
    print(f"  result: {'FAIL' if failed else 'PASS'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
