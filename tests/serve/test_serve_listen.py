"""`holon serve --listen`: a real webhook delivery over loopback, decided by the running loop."""

from __future__ import annotations

import http.client
import json
import signal
import time
from pathlib import Path

from holon.gateway.webhook import signature_for
from tests.gateway.conftest import example
from tests.serve.conftest import listening_serve

SECRET = "listen-secret-for-tests"


def test_signed_delivery_is_accepted_and_decided(tmp_path: Path) -> None:
    state = tmp_path / "s"
    proc, port = listening_serve(state, SECRET)
    try:
        payload = example("issue_comment", "created")
        payload["comment"]["body"] = "/holon solve"
        body = json.dumps(payload).encode()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {
            "X-GitHub-Event": "issue_comment",
            "X-GitHub-Delivery": "live-1",
            "X-Hub-Signature-256": signature_for(body, SECRET),
            "Content-Type": "application/json",
        }
        conn.request("POST", "/webhook", body=body, headers=headers)
        response = conn.getresponse()
        assert response.status == 202
        response.read()
        conn.close()
        unsigned = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        unsigned.request("POST", "/webhook", body=body, headers={"X-GitHub-Event": "issues"})
        assert unsigned.getresponse().status == 401
        unsigned.close()
        decisions = state / "decisions.ndjson"
        deadline = time.monotonic() + 20
        while not decisions.exists() or not decisions.read_text().strip():
            assert time.monotonic() < deadline, "the delivery was never decided"
            time.sleep(0.05)
        decision = json.loads(decisions.read_text().splitlines()[0])
        assert decision["intents"][0]["args"]["skill"] == "github-issue-solve"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    assert proc.returncode == 0


def test_an_ipv6_loopback_address_is_printed_with_its_brackets(tmp_path: Path) -> None:
    import socket

    try:
        socket.socket(socket.AF_INET6).close()
        socket.getaddrinfo("::1", 0, socket.AF_INET6)
    except OSError:
        import pytest

        pytest.skip("no IPv6 on this machine")
    proc, port = listening_serve(tmp_path / "s", SECRET, address="[::1]:0")
    try:
        conn = http.client.HTTPConnection("::1", port, timeout=10)
        conn.request("POST", "/webhook", body=b"{}", headers={"X-GitHub-Event": "ping"})
        assert conn.getresponse().status == 401  # reached over IPv6, refused as unsigned
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
