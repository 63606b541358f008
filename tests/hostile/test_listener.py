"""Hostile corpus: the webhook receiver of `holon serve --listen` against floods and stalls.

Each case was unsafe once: 25 MiB bodies with a wrong signature were buffered whole before the
check (memory grew by 300 MB under 120 of them and stayed), a delivery could be answered 202 and
then lost, slow senders held a thread each for as long as they liked, and a listen backlog of 5
reset connections under 50 concurrent senders.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from holon.gateway.webhook import signature_for
from tests.gateway.conftest import example
from tests.serve.conftest import listening_serve

SECRET = "hostile-listener-secret"
MiB = 1024 * 1024


def _memory_kib(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(rf"{field}:\s+(\d+)", status)
    assert found is not None
    return int(found[1])


def _serve(state: Path) -> tuple[subprocess.Popen[str], int]:
    return listening_serve(state, SECRET)


def test_a_flood_of_25_mib_bodies_with_a_wrong_signature_holds_no_memory(
    tmp_path: Path,
) -> None:
    proc, port = _serve(tmp_path / "s")
    pid = proc.pid
    body = json.dumps({"zen": "z" * (25 * MiB - 64)}).encode()
    forged = signature_for(body, "not-the-secret")
    statuses: list[int] = []
    lock = threading.Lock()

    def flood() -> None:
        for _ in range(2):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                conn.request(
                    "POST",
                    "/webhook",
                    body=body,
                    headers={"X-GitHub-Event": "issues", "X-Hub-Signature-256": forged},
                )
                status = conn.getresponse().status
            finally:
                conn.close()
            with lock:
                statuses.append(status)

    try:
        time.sleep(0.5)
        before = _memory_kib(pid, "VmRSS")
        threads = [threading.Thread(target=flood) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        peak = _memory_kib(pid, "VmHWM")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert statuses == [401] * 16
    # Eight bodies of 25 MiB at once were 200 MiB held in memory before the fix; now each
    # handler holds at most a 1 MiB spool and a 64 KiB chunk.
    assert (peak - before) < 64 * 1024, f"peak grew by {(peak - before) // 1024} MiB"


def test_a_held_open_connection_does_not_delay_a_real_delivery(tmp_path: Path) -> None:
    proc, port = _serve(tmp_path / "s")
    stalls = []
    try:
        for _ in range(40):  # more stalled senders than handlers: spare threads answer 503
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"POST /webhook HTTP/1.1\r\nContent-Length: 10\r\n")
            stalls.append(sock)
        payload = example("issue_comment", "created")
        body = json.dumps(payload).encode()
        began = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request(
            "POST",
            "/webhook",
            body=body,
            headers={
                "X-GitHub-Event": "issue_comment",
                "X-Hub-Signature-256": signature_for(body, SECRET),
            },
        )
        status = conn.getresponse().status
        conn.close()
        # Answered at once: 202, or 503 with Retry-After while the stalls hold every handler;
        # never left waiting for the stalls' own deadline.
        assert status in (202, 503)
        assert time.monotonic() - began < 5
    finally:
        for sock in stalls:
            sock.close()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
