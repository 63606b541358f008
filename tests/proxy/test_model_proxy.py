"""The key proxy against a real fake model on 127.0.0.1: what it forwards, what it refuses, what
it meters, and that the key never leaves it except towards the provider."""

from __future__ import annotations

import json
import logging
import os
import socket
import socketserver
import stat
import threading
import time
from pathlib import Path

import pytest

from holon.runner.model_proxy import ModelProxy, ProxyLimits, _Server
from holon.runner.model_routes import Route, routes_for
from holon.runner.record import ModelUsage
from tests.proxy.conftest import KEY, UnixConnection, call, start_proxy
from tests.support.fake_model import ANTHROPIC_ANSWER, OPENAI_ANSWER, FakeModel

MESSAGE = json.dumps({"model": "claude-fake-1", "max_tokens": 5, "messages": []}).encode()
HOSTILE_HEADERS = {
    "content-type": "application/json",
    "anthropic-version": "2023-06-01",
    "x-api-key": "sk-ant-guessed-by-the-agent",
    "authorization": "Bearer sk-guessed-by-the-agent",
    "api-key": "azure-style-guess",
    "cookie": "session=1",
    "proxy-authorization": "Basic Zm9vOmJhcg==",
    "x-forwarded-for": "10.0.0.1",
}


@pytest.fixture(autouse=True)
def _debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)


def _no_key_logged(caplog: pytest.LogCaptureFixture) -> None:
    assert KEY not in caplog.text
    assert KEY[8:] not in caplog.text


def test_anthropic_request_gets_the_real_key_and_nothing_the_agent_sent(
    fake: FakeModel, proxy: ModelProxy, caplog: pytest.LogCaptureFixture
) -> None:
    answer = call(proxy.socket_path, "POST", "/v1/messages", MESSAGE, HOSTILE_HEADERS)
    assert answer.status == 200
    assert answer.json() == ANTHROPIC_ANSWER
    assert answer.headers["request-id"] == "req_fake"
    assert "set-cookie" not in answer.headers
    [seen] = fake.requests
    assert seen.path == "/v1/messages"
    assert seen.body == MESSAGE
    assert seen.headers["x-api-key"] == KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    for dropped in ("authorization", "api-key", "cookie", "proxy-authorization", "x-forwarded-for"):
        assert dropped not in seen.headers
    assert proxy.usage() == ModelUsage(
        input_tokens=14, output_tokens=7, requests=1, model="claude-fake-1"
    )
    _no_key_logged(caplog)


def test_openai_request_gets_a_bearer_key_and_is_metered(
    fake: FakeModel, proxy: ModelProxy
) -> None:
    answer = call(proxy.socket_path, "POST", "/v1/chat/completions", b"{}", HOSTILE_HEADERS)
    assert answer.status == 200
    assert answer.json() == OPENAI_ANSWER
    [seen] = fake.requests
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in seen.headers
    assert proxy.usage() == ModelUsage(
        input_tokens=20, output_tokens=5, requests=1, model="gpt-fake-1"
    )


def test_usage_adds_up_over_keep_alive_requests_and_both_providers(
    fake: FakeModel, proxy: ModelProxy
) -> None:
    conn = UnixConnection(proxy.socket_path)
    try:
        for _ in range(3):
            assert call(proxy.socket_path, "POST", "/v1/messages", connection=conn).status == 200
        assert (
            call(proxy.socket_path, "POST", "/v1/chat/completions", connection=conn).status == 200
        )
    finally:
        conn.close()
    usage = proxy.usage()
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (3 * 14 + 20, 3 * 7 + 5, 4)
    assert usage.model == "gpt-fake-1"  # the last answer's


@pytest.mark.parametrize(
    ("method", "target", "status"),
    [
        ("GET", "/v1/messages", 405),
        ("PUT", "/v1/messages", 405),
        ("DELETE", "/v1/chat/completions", 405),
        ("GET", "/", 404),
        ("POST", "/v1/models", 404),
        ("POST", "/v1/messages/count_tokens", 404),
        ("POST", "/v1/messages?beta=true", 404),
        ("POST", "/v1/messages/", 404),
        ("POST", "http://api.anthropic.com/v1/messages", 404),
        ("POST", "/v1/complete", 404),
    ],
)
def test_only_the_providers_post_paths_are_forwarded(
    fake: FakeModel, proxy: ModelProxy, method: str, target: str, status: int
) -> None:
    answer = call(proxy.socket_path, method, target, b"{}", {"content-type": "application/json"})
    assert answer.status == status
    assert answer.json()["type"] == "error"
    assert fake.requests == []
    assert proxy.usage().requests == 0


def test_a_provider_without_a_key_has_no_route(fake: FakeModel) -> None:
    proxy = start_proxy(fake, keys={"ANTHROPIC_API_KEY": KEY})
    try:
        assert call(proxy.socket_path, "POST", "/v1/chat/completions").status == 404
        assert call(proxy.socket_path, "POST", "/v1/messages").status == 200
    finally:
        proxy.stop()
    assert [seen.path for seen in fake.requests] == ["/v1/messages"]


def test_a_body_over_the_bound_is_refused_unread(fake: FakeModel) -> None:
    proxy = start_proxy(fake, limits=ProxyLimits(max_body=1024))
    try:
        big = call(proxy.socket_path, "POST", "/v1/messages", b"x" * 2000)
        assert big.status == 413
        assert big.json()["error"]["type"] == "request_too_large"
        fits = call(proxy.socket_path, "POST", "/v1/messages", b"x" * 1024)
        assert fits.status == 200
    finally:
        proxy.stop()
    assert len(fake.requests) == 1


def test_a_body_without_a_length_is_refused(fake: FakeModel, proxy: ModelProxy) -> None:
    request = (
        b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\n{}\r\n0\r\n\r\n"
    )
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(proxy.socket_path))
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 411 ")
    assert b"connection: close" in answer.lower()
    assert fake.requests == []


def test_the_token_cap_refuses_requests_once_spent(fake: FakeModel) -> None:
    proxy = start_proxy(fake, token_cap=30)
    try:
        assert call(proxy.socket_path, "POST", "/v1/messages").status == 200  # 21 tokens
        assert call(proxy.socket_path, "POST", "/v1/messages").status == 200  # 42: past the cap
        refused = call(proxy.socket_path, "POST", "/v1/messages")
    finally:
        proxy.stop()
    assert refused.status == 403
    error = refused.json()["error"]
    assert error["type"] == "token_cap_reached"
    assert "30" in error["message"]
    assert "42 tokens used" in error["message"]
    assert len(fake.requests) == 2
    assert proxy.usage().requests == 2


def test_an_upstream_5xx_comes_back_as_it_was(
    fake: FakeModel, proxy: ModelProxy, caplog: pytest.LogCaptureFixture
) -> None:
    fake.status = 529
    answer = call(proxy.socket_path, "POST", "/v1/messages")
    assert answer.status == 529
    assert answer.json()["error"]["message"] == "the fake is down"
    assert proxy.usage() == ModelUsage(input_tokens=0, output_tokens=0, requests=1, model=None)
    _no_key_logged(caplog)


def test_an_upstream_timeout_is_a_clean_504(
    fake: FakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    fake.delay = 1.0
    proxy = start_proxy(fake, limits=ProxyLimits(read_timeout=0.2))
    try:
        answer = call(proxy.socket_path, "POST", "/v1/messages", MESSAGE, HOSTILE_HEADERS)
    finally:
        proxy.stop()
    assert answer.status == 504
    assert answer.json()["error"] == {
        "type": "proxy_error",
        "message": "anthropic: the model provider did not answer in time",
    }
    assert KEY not in answer.body.decode()
    _no_key_logged(caplog)


def test_an_unreachable_upstream_is_a_clean_502(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    routes = routes_for(
        {"ANTHROPIC_API_KEY": KEY}, {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"}, {}
    )
    with ModelProxy(routes) as proxy:
        answer = call(proxy.socket_path, "POST", "/v1/messages")
    assert answer.status == 502
    assert answer.json()["error"]["type"] == "proxy_error"
    assert KEY not in answer.body.decode()
    _no_key_logged(caplog)


def test_a_streamed_answer_is_relayed_and_metered(fake: FakeModel, proxy: ModelProxy) -> None:
    fake.stream = True
    answer = call(proxy.socket_path, "POST", "/v1/messages")
    assert answer.status == 200
    assert answer.headers["content-type"] == "text/event-stream"
    assert answer.body.count(b"event: ") == 4
    assert proxy.usage() == ModelUsage(
        input_tokens=30, output_tokens=9, requests=1, model="claude-fake-1"
    )


def test_the_key_is_in_no_repr() -> None:
    [route] = routes_for({"ANTHROPIC_API_KEY": KEY}, {}, {}).values()
    assert KEY not in repr(route)
    assert KEY not in repr(ModelProxy({"/v1/messages": route}))
    assert route == Route("anthropic", "https://api.anthropic.com/v1/messages", "x-api-key", KEY)


def test_the_socket_is_private_and_gone_after_stop(fake: FakeModel) -> None:
    proxy = start_proxy(fake)
    directory = proxy.directory
    assert directory is not None
    try:
        info = os.stat(directory)
        assert stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == os.getuid()
        assert stat.S_ISSOCK(os.stat(proxy.socket_path).st_mode)
        assert stat.S_IMODE(os.stat(proxy.socket_path).st_mode) == 0o600
        # An idle keep-alive connection does not hold the stop up.
        conn = UnixConnection(proxy.socket_path)
        assert call(proxy.socket_path, "POST", "/v1/messages", connection=conn).status == 200
    finally:
        started = time.monotonic()
        proxy.stop()
    assert time.monotonic() - started < 2
    conn.close()
    assert not directory.exists()
    assert threading.active_count() < 20


def test_concurrent_requests_are_all_forwarded_and_counted(
    fake: FakeModel, proxy: ModelProxy
) -> None:
    fake.delay = 0.05
    statuses: list[int] = []

    def one() -> None:
        statuses.append(call(proxy.socket_path, "POST", "/v1/messages").status)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert statuses == [200] * 8
    assert proxy.usage().requests == 8
    assert proxy.usage().input_tokens == 8 * 14


def test_a_burst_of_connections_waits_in_the_backlog_instead_of_being_refused(
    tmp_path: Path,
) -> None:
    """Nothing accepts (a busy machine's accept thread not yet scheduled): 64 clients with a
    timeout, as SDKs connect, are all queued; none gets EAGAIN (socketserver's backlog was 5)."""
    server = _Server(str(tmp_path / "model.sock"), socketserver.BaseRequestHandler)
    clients = []
    try:
        for _ in range(64):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            clients.append(sock)
            sock.settimeout(5)
            sock.connect(str(tmp_path / "model.sock"))
    finally:
        for sock in clients:
            sock.close()
        server.server_close()
