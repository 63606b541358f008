"""A webhook client for the receiver's tests: real HTTP to 127.0.0.1, GitHub's example payloads
signed like GitHub signs them, and a `start` fixture for listeners stopped after each test."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from holon.gateway.envelope import EventEnvelope
from holon.gateway.webhook import signature_for
from tests.gateway.conftest import example

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SECRET = "s3cret-for-listener-tests"
TIMEOUT = 2.0

Address = tuple[str, int]


class Response:
    def __init__(self, status: int, headers: http.client.HTTPMessage, raw: bytes) -> None:
        self.status = status
        self.headers = headers
        self.raw = raw
        self.json: dict[str, Any] = json.loads(raw)


class Recorder:
    """A sink that keeps what it is given; `accept` says what it answers."""

    def __init__(self, accept: bool = True) -> None:
        self.accept = accept
        self.envelopes: list[EventEnvelope] = []

    def __call__(self, envelope: EventEnvelope) -> bool:
        self.envelopes.append(envelope)
        return self.accept


Start = Callable[..., Address]


def delivery(
    event: str = "issue_comment",
    action: str | None = "created",
    *,
    secret: str | None = SECRET,
    body: bytes | None = None,
    delivery_id: str = "d-1",
) -> tuple[bytes, dict[str, str]]:
    """A GitHub-style delivery of the real example payload, signed with `secret`."""
    if body is None:
        body = json.dumps(example(event, action)).encode()
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
    }
    if secret is not None:
        headers["X-Hub-Signature-256"] = signature_for(body, secret)
    return body, headers


def send(
    address: Address,
    body: bytes | None,
    headers: dict[str, str],
    *,
    method: str = "POST",
    path: str = "/webhook",
) -> Response:
    conn = http.client.HTTPConnection(*address, timeout=TIMEOUT)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return Response(resp.status, resp.headers, resp.read())
    finally:
        conn.close()


def raw_exchange(address: Address, data: bytes) -> tuple[bytes, float]:
    """Send raw bytes, read until the server closes; the reply and how long it took."""
    began = time.monotonic()
    with socket.create_connection(address, timeout=TIMEOUT) as sock:
        sock.sendall(data)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply, time.monotonic() - began


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def json_of(reply: bytes) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(reply.split(b"\r\n\r\n", 1)[1])
    return result
