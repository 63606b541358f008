"""The receiver under load and abuse: bounded handlers, deadlines, 503 instead of resets."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest

from holon.serve import connections
from holon.serve import listener as listener_module
from holon.serve.inbox import Inbox
from tests.serve.webhook_client import (
    TIMEOUT,
    Recorder,
    Start,
    delivery,
    json_of,
    send,
    status_of,
)


def _head(headers: dict[str, str], length: int) -> bytes:
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (
        f"POST /webhook HTTP/1.1\r\nHost: localhost\r\n{lines}Content-Length: {length}\r\n\r\n"
    ).encode()


def _read_all(sock: socket.socket) -> bytes:
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    return reply


def test_a_slow_drip_body_is_cut_off_at_the_deadline(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connections, "REQUEST_DEADLINE_SECONDS", 1.0)
    sink = Recorder()
    address = start(sink)
    body, headers = delivery()
    began = time.monotonic()
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(_head(headers, len(body)))
        try:
            for byte in body[:40]:  # a byte every 0.1 s: each read is quick, the whole is not
                sock.sendall(bytes([byte]))
                time.sleep(0.1)
        except OSError:
            pass  # the server may close its side while we are still dripping
        reply = _read_all(sock)
    assert status_of(reply) == 408
    assert "longer than 1s" in json_of(reply)["error"]
    assert time.monotonic() - began < 6
    assert sink.envelopes == []
    assert send(address, *delivery()).status == 202  # the handler is free again


def test_headers_dripped_forever_free_the_handler(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connections, "REQUEST_DEADLINE_SECONDS", 1.0)
    address = start(Recorder(), max_handlers=1)
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: localhost\r\n")  # and never the rest
        began = time.monotonic()
        reply = _read_all(sock)  # answered and closed by the server at the deadline
        assert time.monotonic() - began < 5
    assert status_of(reply) == 408
    assert send(address, *delivery()).status == 202


def test_every_handler_busy_is_a_503_with_retry_after_not_a_reset(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connections, "REQUEST_DEADLINE_SECONDS", 5.0)
    address = start(Recorder(), max_handlers=1)
    hog = socket.create_connection(address, timeout=10)
    try:
        hog.sendall(b"POST /webhook HTTP/1.1\r\n")  # holds the only handler
        time.sleep(0.2)
        body, headers = delivery()
        with socket.create_connection(address, timeout=10) as sock:
            sock.sendall(_head(headers, len(body)) + body)
            reply = _read_all(sock)  # a reset would raise ConnectionResetError here
        assert status_of(reply) == 503
        assert b"Retry-After: " in reply
        assert "busy" in json_of(reply)["error"]
    finally:
        hog.close()


def test_missing_signature_is_refused_before_the_body(start: Start) -> None:
    address = start(Recorder())
    _, headers = delivery(secret=None)
    began = time.monotonic()
    with socket.create_connection(address, timeout=10) as sock:
        # 20 MB promised, none sent: an answer now means nothing of it was waited for.
        sock.sendall(_head(headers, 20_000_000))
        reply = _read_all(sock)
    assert status_of(reply) == 401
    assert time.monotonic() - began < 2


def test_a_wrong_signature_is_checked_while_reading_not_buffered(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The body goes through the signature check chunk by chunk into a spool that keeps at most
    # this much in memory; a spool that was never asked to roll over held the whole body.
    rolled: list[int] = []
    spooled = listener_module.tempfile.SpooledTemporaryFile

    class Spy(spooled):  # type: ignore[misc,valid-type]
        def rollover(self) -> None:
            rolled.append(self.tell())
            super().rollover()

    monkeypatch.setattr(listener_module.tempfile, "SpooledTemporaryFile", Spy)
    sink = Recorder()
    address = start(sink)
    body = json.dumps({"zen": "x" * (3 * 1024 * 1024)}).encode()
    _, headers = delivery(body=body, secret="not-the-secret")
    assert send(address, body, headers).status == 401
    assert rolled  # past 1 MiB it went to an unlinked temp file, not memory
    assert sink.envelopes == []


@pytest.mark.parametrize("senders", [50, 100])
def test_concurrent_senders_get_an_answer_each_never_a_reset(
    start: Start, tmp_path: Path, senders: int
) -> None:
    inbox = Inbox(tmp_path, max_pending=10_000)
    address = start(inbox.offer)
    statuses: list[int] = []
    failures: list[str] = []
    lock = threading.Lock()
    gate = threading.Barrier(senders)

    def sender(index: int) -> None:
        gate.wait(TIMEOUT * 5)
        for round_ in range(3):
            body, headers = delivery(delivery_id=f"load-{index}-{round_}")
            try:
                status = send(address, body, headers).status
            except OSError as exc:  # a reset or refused connection is exactly the failure
                with lock:
                    failures.append(f"{type(exc).__name__}: {exc}")
                continue
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=sender, args=(i,)) for i in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert set(statuses) <= {202, 503}
    assert len(statuses) == senders * 3
    assert statuses.count(202) == len(inbox)  # every 202 is in the inbox, once
