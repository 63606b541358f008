"""The loopback webhook receiver, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from holon.gateway.envelope import EventEnvelope
from holon.gateway.webhook import signature_for
from holon.serve.inbox import Inbox
from holon.serve.listener import RETRY_AFTER_SECONDS, WebhookListener
from tests.gateway.conftest import example
from tests.serve.webhook_client import (
    NOW,
    SECRET,
    TIMEOUT,
    Recorder,
    Response,
    Start,
    delivery,
    json_of,
    raw_exchange,
    send,
    status_of,
)

# --- accepted ----------------------------------------------------------------------------------


def test_signed_real_payload_accepted(start: Start) -> None:
    sink = Recorder()
    address = start(sink)
    body, headers = delivery("issue_comment", "created")
    resp = send(address, body, headers)
    assert resp.status == 202
    assert resp.headers["Content-Type"] == "application/json"
    (envelope,) = sink.envelopes
    assert resp.json == {"status": "accepted", "id": envelope.id}
    assert envelope.type == "github.issue_comment.created"
    assert envelope.via == "webhook"
    assert envelope.delivery == "d-1"
    assert envelope.at.tzinfo is not None
    assert envelope.payload == example("issue_comment", "created")


@pytest.mark.parametrize("path", ["/", "/webhook", "/webhook?from=forwarder"])
def test_both_paths_accepted(start: Start, path: str) -> None:
    address = start(Recorder())
    assert send(address, *delivery(), path=path).status == 202


def test_ping_accepted(start: Start) -> None:
    sink = Recorder()
    address = start(sink)
    resp = send(address, *delivery("ping", None))
    assert resp.status == 202
    assert sink.envelopes[0].type == "github.ping"


def test_202_is_answered_before_the_decision(start: Start, tmp_path: Path) -> None:
    queue = Inbox(tmp_path, max_pending=10)
    taken = threading.Event()
    release = threading.Event()
    decided: list[EventEnvelope] = []

    def consumer() -> None:
        got = queue.take(timeout=TIMEOUT)
        envelope = got.envelope if got is not None else None
        taken.set()
        release.wait(TIMEOUT)  # the "decision" is stuck until the test lets it go
        if envelope is not None:
            decided.append(envelope)

    thread = threading.Thread(target=consumer, daemon=True)
    thread.start()
    try:
        address = start(queue.offer)
        resp = send(address, *delivery())
        assert resp.status == 202
        assert taken.wait(TIMEOUT)
        assert decided == []  # answered while the consumer is still blocked on it
    finally:
        release.set()
        thread.join(TIMEOUT)
    assert [env.id for env in decided] == [resp.json["id"]]


def test_full_queue_answers_503_with_retry_after(start: Start, tmp_path: Path) -> None:
    queue = Inbox(tmp_path, max_pending=1)
    errors: list[str] = []
    address = start(queue.offer, on_error=errors.append)
    first = send(address, *delivery("issue_comment", "created", delivery_id="d-1"))
    second = send(address, *delivery("issues", "opened", delivery_id="d-2"))
    assert first.status == 202
    assert second.status == 503
    assert second.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert "queue full" in second.json["error"]
    assert len(queue) == 1
    assert len(errors) == 1
    assert "503" in errors[0]


def test_two_secrets_during_rotation(start: Start) -> None:
    sink = Recorder()
    address = start(sink, secrets=["old-secret", "new-secret"])
    for secret in ("old-secret", "new-secret"):
        assert send(address, *delivery(secret=secret)).status == 202
    assert len(sink.envelopes) == 2


# --- refused -----------------------------------------------------------------------------------


def test_unsigned_refused(start: Start) -> None:
    sink = Recorder()
    address = start(sink)
    resp = send(address, *delivery(secret=None))
    assert resp.status == 401
    assert "X-Hub-Signature-256" in resp.json["error"]
    assert sink.envelopes == []


def test_wrong_signature_refused(start: Start) -> None:
    sink = Recorder()
    address = start(sink)
    resp = send(address, *delivery(secret="not-" + SECRET))
    assert resp.status == 401
    assert "does not match" in resp.json["error"]
    assert sink.envelopes == []


def test_tampered_body_refused(start: Start) -> None:
    body, headers = delivery()
    address = start(Recorder())
    assert send(address, body.replace(b"Hello", b"Jello", 1), headers).status == 401


def test_oversized_content_length_refused_without_reading(start: Start) -> None:
    sink = Recorder()
    address = start(sink, max_body=1024)
    _, headers = delivery()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    request = (
        f"POST /webhook HTTP/1.1\r\nHost: localhost\r\n{head}Content-Length: 10000000\r\n\r\n"
    ).encode() + b'{"zen": "only a little of the promised body"'
    reply, elapsed = raw_exchange(address, request)
    assert status_of(reply) == 413
    assert "over the 1024-byte limit" in json_of(reply)["error"]
    assert b"Connection: close" in reply
    # Had it waited for the 10 MB it was promised, it would sit until the client gave up.
    assert elapsed < 1.0
    assert sink.envelopes == []


def test_oversized_refused_before_100_continue(start: Start) -> None:
    address = start(Recorder(), max_body=1024)
    request = (
        b"POST /webhook HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2048\r\n"
        b"Expect: 100-continue\r\n\r\n"
    )
    reply, elapsed = raw_exchange(address, request)
    assert status_of(reply) == 413  # not "100 Continue": the client never sends the body
    assert elapsed < 1.0


def test_within_limit_accepted_with_100_continue(start: Start) -> None:
    sink = Recorder()
    address = start(sink)
    body, headers = delivery()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    request = (
        f"POST /webhook HTTP/1.1\r\nHost: localhost\r\n{head}Content-Length: {len(body)}\r\n"
        "Expect: 100-continue\r\n\r\n"
    ).encode()
    with socket.create_connection(address, timeout=TIMEOUT) as sock:
        sock.sendall(request)
        interim = sock.recv(1024)
        assert interim.startswith(b"HTTP/1.1 100")
        sock.sendall(body)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert status_of(reply) == 202
    assert len(sink.envelopes) == 1


def test_missing_content_length_refused(start: Start) -> None:
    body, headers = delivery()
    address = start(Recorder())
    conn = http.client.HTTPConnection(*address, timeout=TIMEOUT)
    try:
        conn.putrequest("POST", "/webhook")
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        conn.send(body)
        resp = conn.getresponse()
        assert resp.status == 411
        assert json.loads(resp.read()) == {"error": "Content-Length is required"}
    finally:
        conn.close()


def test_chunked_body_refused(start: Start) -> None:
    body, headers = delivery()
    address = start(Recorder())
    conn = http.client.HTTPConnection(*address, timeout=TIMEOUT)
    try:
        conn.request("POST", "/webhook", body=iter([body]), headers=headers, encode_chunked=True)
        resp = conn.getresponse()
        assert resp.status == 411
        resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("Content-Length: ten\r\n", "not a number"),
        ("Content-Length: -5\r\n", "not a number"),
        ("Content-Length: 5\r\nContent-Length: 6\r\n", "conflicting"),
        ("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "both"),
    ],
)
def test_bad_framing_refused(start: Start, extra: str, message: str) -> None:
    address = start(Recorder())
    request = f"POST /webhook HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n{{}}".encode()
    reply, _ = raw_exchange(address, request)
    assert status_of(reply) == 400
    assert message in json_of(reply)["error"]


def test_invalid_json_refused(start: Start) -> None:
    sink = Recorder()
    address = start(sink)
    resp = send(address, *delivery(body=b'{"comment": "BODY-MARKER-7f3a", '))
    assert resp.status == 400
    assert "invalid JSON" in resp.json["error"]
    assert b"BODY-MARKER-7f3a" not in resp.raw
    assert sink.envelopes == []


def test_invalid_utf8_refused(start: Start) -> None:
    address = start(Recorder())
    resp = send(address, *delivery(body=b'{"comment": "\xff\xfe"}'))
    assert resp.status == 400
    assert "UTF-8" in resp.json["error"]


def test_missing_event_header_refused(start: Start) -> None:
    body, headers = delivery()
    del headers["X-GitHub-Event"]
    address = start(Recorder())
    resp = send(address, body, headers)
    assert resp.status == 400
    assert "X-GitHub-Event" in resp.json["error"]


def test_payload_disagreeing_with_event_refused(start: Start) -> None:
    body = json.dumps(example("push")).encode()
    address = start(Recorder())
    resp = send(address, *delivery("issue_comment", body=body))
    assert resp.status == 400
    assert "disagrees" in resp.json["error"]


def test_duplicate_signature_header_refused(start: Start) -> None:
    body, headers = delivery()
    address = start(Recorder())
    conn = http.client.HTTPConnection(*address, timeout=TIMEOUT)
    try:
        conn.putrequest("POST", "/webhook")
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.putheader("X-Hub-Signature-256", signature_for(body, "other"))
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        assert resp.status == 400
        assert "more than one X-Hub-Signature-256" in json.loads(resp.read())["error"]
    finally:
        conn.close()


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"])
def test_other_methods_refused(start: Start, method: str) -> None:
    address = start(Recorder())
    resp = send(address, None, {}, method=method)
    assert resp.status == 405
    assert resp.headers["Allow"] == "POST"
    assert "use POST" in resp.json["error"]


def test_head_refused_without_body(start: Start) -> None:
    address = start(Recorder())
    conn = http.client.HTTPConnection(*address, timeout=TIMEOUT)
    try:
        conn.request("HEAD", "/webhook")
        resp = conn.getresponse()
        assert resp.status == 405
        assert resp.read() == b""
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("method", "path"), [("POST", "/hook"), ("POST", "/webhook/x"), ("GET", "/")]
)
def test_wrong_path_refused(start: Start, method: str, path: str) -> None:
    sink = Recorder()
    address = start(sink)
    body, headers = delivery()
    resp = send(address, body if method == "POST" else None, headers, method=method, path=path)
    expected = 404 if path not in ("/", "/webhook") else 405
    assert resp.status == expected
    assert sink.envelopes == []


def test_malformed_request_answered_in_json(start: Start) -> None:
    address = start(Recorder())
    headers = "".join(f"X-Filler-{n}: {n}\r\n" for n in range(150))
    request = f"POST /webhook HTTP/1.1\r\nHost: localhost\r\n{headers}\r\n".encode()
    reply, _ = raw_exchange(address, request)
    assert status_of(reply) == 431  # http.server's own refusal, in the same JSON shape
    assert json_of(reply) == {"error": "Too many headers"}
    assert b"<html" not in reply.lower()


# --- what never leaks --------------------------------------------------------------------------


def test_errors_never_contain_the_secret_or_body(start: Start) -> None:
    address = start(Recorder())
    body, headers = delivery()
    cases = [
        delivery(secret=None),
        delivery(secret="wrong"),
        (body, {k: v for k, v in headers.items() if k != "X-GitHub-Event"}),
        delivery(body=b'{"secret": "' + SECRET.encode() + b'", '),
        delivery("issue_comment", body=json.dumps(example("push")).encode()),
    ]
    for case_body, case_headers in cases:
        resp = send(address, case_body, case_headers)
        assert resp.status in (400, 401)
        assert SECRET.encode() not in resp.raw
        assert set(resp.json) == {"error"}
        assert "\n" not in resp.json["error"]
        assert b"Traceback" not in resp.raw


def test_unexpected_failure_is_500_generic_and_reported(start: Start) -> None:
    errors: list[str] = []

    def broken(envelope: EventEnvelope) -> bool:
        raise RuntimeError(f"boom with {SECRET} and {envelope.payload}")

    address = start(broken, on_error=errors.append)
    resp = send(address, *delivery())
    assert resp.status == 500
    assert resp.json == {"error": "internal error"}
    assert len(errors) == 1
    assert "RuntimeError" in errors[0]
    assert SECRET not in errors[0]
    assert "comment" not in errors[0]


def test_failing_reporter_does_not_break_the_answer(start: Start) -> None:
    def reporter(message: str) -> None:
        raise OSError("log sink is gone")

    address = start(Recorder(accept=False), on_error=reporter)
    assert send(address, *delivery()).status == 503


def test_nothing_printed_per_request(start: Start, capfd: pytest.CaptureFixture[str]) -> None:
    address = start(Recorder())
    send(address, *delivery())
    send(address, *delivery(secret=None))
    send(address, None, {}, method="GET")
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


# --- lifecycle and configuration ---------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    # S104: these are the hosts the listener must refuse; nothing binds to them.
    ["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "example.com", "", "::ffff:8.8.8.8"],  # noqa: S104
)
def test_non_loopback_host_refused(host: str) -> None:
    with pytest.raises(ValueError, match="not a loopback address"):
        WebhookListener(host, 0, [SECRET], Recorder())


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.3.2.1", "localhost", "LOCALHOST", "::1", "[::1]"]
)
def test_loopback_hosts_allowed(host: str) -> None:
    WebhookListener(host, 0, [SECRET], Recorder())


@pytest.mark.parametrize(
    ("kw", "error"),
    [
        ({"secrets": []}, ValueError),
        ({"secrets": [""]}, ValueError),
        ({"secrets": SECRET}, TypeError),
        ({"port": 70000}, ValueError),
        ({"max_body": 0}, ValueError),
        ({"mention": "two words"}, ValueError),
    ],
)
def test_bad_configuration_refused(kw: dict[str, Any], error: type[Exception]) -> None:
    args: dict[str, Any] = {"port": 0, "secrets": [SECRET], **kw}
    port, secrets = args.pop("port"), args.pop("secrets")
    with pytest.raises(error) as info:
        WebhookListener("127.0.0.1", port, secrets, Recorder(), **args)
    assert SECRET not in str(info.value)


def test_localhost_binds_ipv4_loopback() -> None:
    with WebhookListener("localhost", 0, [SECRET], Recorder()) as listener:
        assert listener.address is not None
        host, port = listener.address
        assert host == "127.0.0.1"
        assert port > 0


def test_ipv6_loopback() -> None:
    try:
        listener = WebhookListener("::1", 0, [SECRET], Recorder(), clock=lambda: NOW)
        address = listener.start()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:
        assert address[0] == "::1"
        assert send(address, *delivery()).status == 202
    finally:
        listener.stop()


def test_stop_then_connection_refused() -> None:
    listener = WebhookListener("127.0.0.1", 0, [SECRET], Recorder(), clock=lambda: NOW)
    address = listener.start()
    assert send(address, *delivery()).status == 202
    listener.stop()
    assert listener.address is None
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=TIMEOUT).close()
    listener.stop()  # twice is harmless


def test_start_twice_refused() -> None:
    listener = WebhookListener("127.0.0.1", 0, [SECRET], Recorder())
    with listener, pytest.raises(RuntimeError, match="already running"):
        listener.start()


def test_stop_waits_for_the_request_in_flight() -> None:
    entered = threading.Event()
    release = threading.Event()

    def slow(envelope: EventEnvelope) -> bool:
        entered.set()
        release.wait(TIMEOUT)
        return True

    listener = WebhookListener("127.0.0.1", 0, [SECRET], slow, clock=lambda: NOW)
    address = listener.start()
    responses: list[Response] = []
    client = threading.Thread(target=lambda: responses.append(send(address, *delivery())))
    client.start()
    assert entered.wait(TIMEOUT)
    stopper = threading.Thread(target=listener.stop)
    stopper.start()
    stopper.join(0.3)
    assert stopper.is_alive()  # still waiting for the sink
    release.set()
    stopper.join(TIMEOUT)
    client.join(TIMEOUT)
    assert not stopper.is_alive()
    assert [r.status for r in responses] == [202]


def test_client_hanging_up_is_not_reported() -> None:
    errors: list[str] = []
    listener = WebhookListener(
        "127.0.0.1", 0, [SECRET], Recorder(), clock=lambda: NOW, on_error=errors.append
    )
    address = listener.start()
    try:
        with socket.create_connection(address, timeout=TIMEOUT) as sock:
            sock.sendall(
                b"POST /webhook HTTP/1.1\r\nHost: localhost\r\nContent-Length: 50\r\n\r\n{"
            )
        # Gone before its body ended: answering it fails, and that is nobody's 5xx.
        assert send(address, *delivery()).status == 202  # still serving
    finally:
        listener.stop()  # waits for both handlers, so their reports (if any) are in
    assert errors == []
