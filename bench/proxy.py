"""Benchmark: what the model key proxy adds to each model request, beside a direct loopback call.

Target (from the issue): the proxy adds less than 5 ms per request over a direct loopback call
to the same model server, at the median and at p95.

Three processes, as in a real run: the fake model (`tests.support.fake_model`: Anthropic's
`/v1/messages` answered with a fixed ~300-byte body after checking the key) on 127.0.0.1, the
key proxy (`holon.runner.model_proxy`, as the docker backend starts it, in front of that model)
on a unix socket, and this process as the agent. Side by side, in rounds that alternate: the
baseline posts a ~12 KB Messages request straight to the model with the key over one keep-alive
connection (`requests`); the measured side posts the same request without a key to the proxy's
socket through the agent's own transport (`holon.agent.providers.proxied.unix_session`). Every
request's latency is recorded; the first request of each side is a checked, untimed warm-up (the
answer whole, the key arriving on the proxied side, the usage metered). Run from the repository
root: `python -m bench.proxy` (`--rounds N`, `--requests N` per side per round, `--smoke`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from bench._common import MIN_ROUNDS, BenchError, Row, collect, judged, record

TARGET_MS = 5.0
KEY = "sk-ant-bench-proxy-0123456789abcdef"
REPO = Path(__file__).resolve().parents[1]

FAKE = """
import sys, time
from tests.support.fake_model import fake_model
with fake_model(sys.argv[1]) as model:
    print(model.base_url, flush=True)
    sys.stdin.read()  # until the benchmark closes it
"""
PROXY = """
import os, sys
from holon.runner.model_proxy import ModelProxy
from holon.runner.model_routes import routes_for
routes = routes_for(
    {"ANTHROPIC_API_KEY": os.environ["BENCH_KEY"]}, {"ANTHROPIC_BASE_URL": sys.argv[1]}, {}
)
with ModelProxy(routes) as proxy:
    print(proxy.socket_path, flush=True)
    sys.stdin.read()
    print(proxy.usage().model_dump_json(), flush=True)
"""


def request_body() -> bytes:
    """A Messages request of the size an agent's mid-run turn has: a system prompt, a few tool
    results, tools."""
    turns: list[dict[str, Any]] = []
    for i in range(6):
        turns.append({"role": "user", "content": f"result {i}: " + "line of output\n" * 60})
        turns.append({"role": "assistant", "content": f"I will look at step {i} next."})
    turns.append({"role": "user", "content": "go on"})
    return json.dumps(
        {
            "model": "claude-fake-1",
            "max_tokens": 4096,
            "system": "You are a careful engineer. " * 20,
            "messages": turns,
            "tools": [
                {"name": name, "description": "a tool", "input_schema": {"type": "object"}}
                for name in ("shell", "view", "edit", "finish")
            ],
        }
    ).encode()


def start(code: str, *args: str, env: dict[str, str] | None = None) -> tuple[Any, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        proc.kill()
        raise BenchError(f"a helper process did not start (exit {proc.wait()})")
    return proc, line


def stop(proc: Any) -> str:
    """Close the helper's stdin (its signal to stop) and return what it printed last."""
    out, _ = proc.communicate(timeout=30)
    return str(out).strip()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.proxy", description=__doc__)
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--requests", type=int, default=200, help="per side per round")
    parser.add_argument("--smoke", action="store_true", help="one small round, not judged")
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    rounds, count = (1, 20) if args.smoke else (args.rounds, args.requests)
    if not args.smoke and rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS} (or use --smoke)")
    from holon.agent.providers.proxied import ORIGIN, unix_session

    work = Path(tempfile.mkdtemp(prefix="bench-proxy-", dir=args.work_dir))
    env = {"TMPDIR": str(work), "BENCH_KEY": KEY}
    fake, base = start(FAKE, KEY)
    proxy: Any = None
    try:
        proxy, socket_path = start(PROXY, base, env=env)
        body = request_body()
        headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
        direct = requests.Session()
        direct.trust_env = False
        through = unix_session(socket_path)

        def call_direct() -> bytes:
            answer = direct.post(
                f"{base}/v1/messages", data=body, headers={**headers, "x-api-key": KEY}
            )
            if answer.status_code != 200:
                raise BenchError(f"the model answered the direct call {answer.status_code}")
            return answer.content

        def call_proxied() -> bytes:
            answer = through.post(f"{ORIGIN}/v1/messages", data=body, headers=headers)
            if answer.status_code != 200:
                raise BenchError(f"the proxied call was answered {answer.status_code}")
            return answer.content

        # Untimed, checked warm-up: both sides get the same answer, the key arrives by proxy.
        if call_direct() != call_proxied() or b"hello from the fake model" not in call_direct():
            raise BenchError("the proxied answer differs from the direct one")
        base_ms: list[float] = []
        proxy_ms: list[float] = []
        for i in range(rounds):
            for calls, samples in ((call_direct, base_ms), (call_proxied, proxy_ms)):
                for _ in range(count):
                    started = time.perf_counter()
                    calls()
                    samples.append((time.perf_counter() - started) * 1000)
            print(
                f"  round {i + 1}/{rounds}: direct median {statistics.median(base_ms[-count:]):.2f}"
                f" ms, proxied median {statistics.median(proxy_ms[-count:]):.2f} ms"
            )
        direct.close()
        through.close()
        usage = json.loads(stop(proxy).splitlines()[-1])
        proxy = None
        expected = rounds * count + 1
        if usage["requests"] != expected or usage["input_tokens"] != 14 * expected:
            raise BenchError(f"the proxy metered {usage}, expected {expected} requests")
    finally:
        if proxy is not None:
            proxy.kill()
            proxy.wait()
        stop(fake)
        subprocess.run(["rm", "-rf", "--", str(work)], check=False)
    return report(base_ms, proxy_ms, len(body), usage, smoke=args.smoke)


def report(
    base_ms: list[float], proxy_ms: list[float], size: int, usage: dict[str, Any], *, smoke: bool
) -> int:
    rows = [("direct loopback call", base_ms), ("through the key proxy", proxy_ms)]
    print()
    print(f"model key proxy: per-request latency ({size}-byte request, {len(base_ms)} per side)")
    print(f"  {'':<24}  {'median':>9}  {'p95':>9}  {'min':>9}  {'max':>9}")
    for label, values in rows:
        median, p95 = statistics.median(values), percentile(values, 0.95)
        print(
            f"  {label:<24}  {median:>7.2f}ms  {p95:>7.2f}ms"
            f"  {min(values):>7.2f}ms  {max(values):>7.2f}ms"
        )
    added_median = statistics.median(proxy_ms) - statistics.median(base_ms)
    added_p95 = percentile(proxy_ms, 0.95) - percentile(base_ms, 0.95)
    print(f"  {'added, median':<24}  {added_median:>7.2f}ms")
    print(f"  {'added, p95':<24}  {added_p95:>7.2f}ms")
    print(f"  {'target':<24}  {'<' + format(TARGET_MS, 'g'):>7}ms (median and p95)")
    print(
        f"  metered by the proxy: {usage['requests']} requests, {usage['input_tokens']} input "
        f"and {usage['output_tokens']} output tokens"
    )
    passed = added_median < TARGET_MS and added_p95 < TARGET_MS
    for what, added, left, right in (
        ("median", added_median, statistics.median(proxy_ms), statistics.median(base_ms)),
        ("p95", added_p95, percentile(proxy_ms, 0.95), percentile(base_ms, 0.95)),
    ):
        record(
            Row(
                f"model key proxy, added latency ({what})",
                f"{left:.2f} ms",
                f"{right:.2f} ms",
                f"+{added:.2f} ms",
                f"< +{TARGET_MS:g} ms",
                judged(smoke, added < TARGET_MS),
            )
        )
    print(f"  result: {'NOT JUDGED (smoke run)' if smoke else 'PASS' if passed else 'FAIL'}")
    return 0 if smoke or passed else 1


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
