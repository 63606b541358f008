"""Benchmark: `holon serve --listen` under concurrent signed senders, beside a bare HTTP server.

Target (from the issue): report the accept latency (send to 202) at p50 and p99 under 50
concurrent signed senders, and the journaled count beside the accepted count, which must be
equal: every delivery answered 202 is in the events journal (`events.ndjson` and its rotated
segments) after serve stops. Any connection error (a reset, a refusal) fails the run; 503 with
Retry-After is back-pressure and is counted.

Side by side, in the same run and with the same client: a bare `ThreadingHTTPServer` that reads
each body and answers 202 (no signature, no parsing, no fsync, nothing kept), so the report shows
what Holon's verification and durable inbox cost per delivery.

Loopback only, bounded in requests and time, and it stops everything it starts. Run:
`python -m bench.listener` (`--deliveries N`, `--senders N`, `--smoke`, `--work-dir DIR`).
"""

from __future__ import annotations

import argparse
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
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._common import BenchError, Row, collect, judged, record, scratch
from holon.gateway.webhook import signature_for
from holon.serve.inbox import pending_count
from holon.state.journal import Journal

EXAMPLES = Path(__file__).resolve().parents[1] / "tests/fixtures/octokit-webhooks/examples.json"
SECRET = "bench-listener-secret"  # noqa: S105 (a test secret for loopback only)
DEADLINE_SECONDS = 600.0  # the whole run stops here, whatever happens
BARE_SERVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"status": "accepted"}'
        self.send_response(202)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

class Server(ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True

server = Server(("127.0.0.1", 0), Handler)
print(f"listening on http://127.0.0.1:{server.server_port}/webhook", flush=True)
server.serve_forever()
"""


@dataclass
class Delivery:
    event: str
    delivery: str
    body: bytes


@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    accepted: list[str] = field(default_factory=list)
    seconds: float = 0.0


def make_deliveries(count: int) -> list[Delivery]:
    """`count` distinct deliveries from GitHub's examples: commands, opened issues, check suites."""
    examples = {e["name"]: e["examples"] for e in json.loads(EXAMPLES.read_text())}
    comment = next(p for p in examples["issue_comment"] if p.get("action") == "created")
    issue = next(p for p in examples["issues"] if p.get("action") == "opened")
    suite = next(p for p in examples["check_suite"] if p.get("action") == "completed")
    made = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            payload = json.loads(json.dumps(comment))
            payload["comment"].update(id=10_000_000 + i, body="/holon status")
            event = "issue_comment"
        elif kind == 1:
            payload = json.loads(json.dumps(issue))
            payload["issue"].update(number=10_000 + i, id=20_000_000 + i)
            event = "issues"
        else:
            payload = json.loads(json.dumps(suite))
            payload["check_suite"]["id"] = 30_000_000 + i
            event = "check_suite"
        made.append(Delivery(event, f"bench-{i}", json.dumps(payload).encode()))
    return made


def _port(proc: subprocess.Popen[str]) -> int:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"127\.0\.0\.1:(\d+)/", line)
    if found is None:
        raise BenchError(f"the server did not say where it listens: {line.strip()!r}")
    return int(found[1])


def send_all(port: int, deliveries: list[Delivery], senders: int) -> Outcome:
    """Each sender posts the next delivery as soon as its last answer came, on a new connection."""
    outcome = Outcome()
    lock = threading.Lock()
    queue: Iterator[Delivery] = iter(deliveries)
    stop_at = time.monotonic() + DEADLINE_SECONDS / 2

    def sender() -> None:
        while time.monotonic() < stop_at:
            with lock:
                item = next(queue, None)
            if item is None:
                return
            headers = {
                "Content-Type": "application/json",
                "X-GitHub-Event": item.event,
                "X-GitHub-Delivery": item.delivery,
                "X-Hub-Signature-256": signature_for(item.body, SECRET),
            }
            began = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                conn.request("POST", "/webhook", body=item.body, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                elapsed = time.perf_counter() - began
            except OSError as exc:
                with lock:
                    outcome.errors[type(exc).__name__] += 1
                continue
            finally:
                conn.close()
            with lock:
                outcome.latencies.append(elapsed)
                outcome.statuses[response.status] += 1
                if response.status == 202:
                    answer: dict[str, Any] = json.loads(raw)
                    if "id" in answer:
                        outcome.accepted.append(answer["id"])

    threads = [threading.Thread(target=sender, daemon=True) for _ in range(senders)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE_SECONDS)
    outcome.seconds = time.perf_counter() - began
    return outcome


def _peak_kib(pid: int) -> int:
    found = re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return int(found[1]) if found else 0


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def _journaled(state: Path) -> set[str]:
    """The ids in the events journal, every rotated segment and the current file, read as serve
    reads them (a torn last line, one being written now, is not counted yet)."""
    return {str(entry["id"]) for entry in Journal(state / "events.ndjson").read()}


def run_holon(
    deliveries: list[Delivery], senders: int, work: Path
) -> tuple[Outcome, int, int, int]:
    """The outcome, how many accepted deliveries were journaled and how many were still kept in
    the inbox when serve stopped, and the serve's peak memory in KiB."""
    state = work / "state"
    env = {**os.environ, "HOLON_BENCH_SECRET": SECRET}
    argv = [sys.executable, "-m", "holon", "serve", "--state-dir", str(state), "--dry-run"]
    argv += ["--listen", "127.0.0.1:0", "--secret-env", "HOLON_BENCH_SECRET"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    try:
        port = _port(proc)
        outcome = send_all(port, deliveries, senders)
        # Let the loop finish what it accepted (bounded), then stop it as an operator would.
        catch_up = time.monotonic() + 60
        while time.monotonic() < catch_up and not set(outcome.accepted) <= _journaled(state):
            time.sleep(0.1)
        peak = _peak_kib(proc.pid)
    finally:
        _stop(proc)
    if proc.returncode != 0:
        raise BenchError(f"holon serve exited {proc.returncode}")
    journaled = _journaled(state)
    missing = [i for i in outcome.accepted if i not in journaled]
    if missing:
        print(f"  {len(missing)} accepted deliveries are not journaled, e.g. {missing[:3]}")
    kept = pending_count(state)
    return outcome, len(set(outcome.accepted) & journaled), kept, peak


def run_bare(deliveries: list[Delivery], senders: int) -> Outcome:
    proc = subprocess.Popen([sys.executable, "-c", BARE_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        return send_all(_port(proc), deliveries, senders)
    finally:
        _stop(proc)


def _percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _row(label: str, outcome: Outcome) -> str:
    ms = [v * 1000 for v in outcome.latencies]
    rate = len(ms) / outcome.seconds if outcome.seconds else 0.0
    return (
        f"  {label:<10} p50 {_percentile(ms, 50):7.2f} ms  p99 {_percentile(ms, 99):7.2f} ms  "
        f"max {max(ms, default=0):7.2f} ms  {rate:7.0f} req/s  "
        f"answers {dict(sorted(outcome.statuses.items()))}  errors {dict(outcome.errors)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.listener", description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=5000)
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="a small run, do not judge")
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    count = 200 if args.smoke else max(args.deliveries, 1000)
    senders = 10 if args.smoke else args.senders
    deliveries = make_deliveries(count)
    print(f"bench.listener: {count} signed deliveries, {senders} concurrent senders, loopback")
    with scratch("bench-listener-", args.work_dir) as work:
        try:
            bare = run_bare(deliveries, senders)
            holon, journaled, kept, peak = run_holon(deliveries, senders, Path(work))
        except BenchError as exc:
            print(f"bench.listener: {exc}")
            return 2
    accepted = len(holon.accepted)
    print(_row("bare", bare))
    print(_row("holon", holon))
    bare_p99 = _percentile(bare.latencies, 99)
    if bare_p99 > 0:
        print(f"  p99 ratio holon/bare {_percentile(holon.latencies, 99) / bare_p99:.2f}x")
    print(
        f"  accepted (202) {accepted}, journaled {journaled}, still kept in the inbox {kept}; "
        f"serve peak memory {peak / 1024:.0f} MiB"
    )
    failed = journaled != accepted or bool(holon.errors) or not accepted
    holon_p99 = _percentile(holon.latencies, 99)
    record(
        Row(
            f"listener, {count:,} deliveries, {senders} senders: p99 accept",
            f"{holon_p99 * 1000:.0f} ms",
            f"{bare_p99 * 1000:.0f} ms",
            f"{holon_p99 / bare_p99:.2f}x" if bare_p99 > 0 else "-",
            "reported",
            None,
        )
    )
    record(
        Row(
            "listener: journaled == accepted, no connection error",
            f"{journaled:,} journaled",
            f"{accepted:,} accepted",
            "-",
            "equal, 0 errors",
            judged(args.smoke, not failed),
        )
    )
    verdict = "NOT JUDGED (smoke run)" if args.smoke else "FAIL" if failed else "PASS"
    print(f"  target: journaled == accepted, no connection errors  result: {verdict}")
    if failed and not args.smoke:
        return 1
    return 2 if failed else 0


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
