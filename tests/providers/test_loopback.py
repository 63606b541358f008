"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1, as a local model
server (llama.cpp, vLLM) would be reached through OPENAI_BASE_URL: over a real socket, with no
key, with a retry, and with nothing listening at all."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from holon.agent.conversation import ToolCall, ToolSpec, Usage, UserMessage
from holon.agent.providers.base import ProviderError
from holon.agent.providers.registry import make_provider
from tests.providers.conftest import OPENAI_KEY, FakeTime, bodies

TOOL_CALL = bodies("openai-chat")["tool_calls"]
SHELL = ToolSpec(name="shell", description="Run a command", parameters={"type": "object"})


@dataclass
class LocalServer:
    """Answers each POST with the next (status, headers, body) and records what it got."""

    answers: list[tuple[int, dict[str, str], bytes]] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    base_url: str = ""


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    state = LocalServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length))
            state.requests.append((self.path, dict(self.headers.items()), body))
            status, headers, payload = state.answers.pop(0)
            self.send_response(status)
            for name, value in {"content-type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_local_server_answers_a_tool_call_over_a_real_socket(
    local_server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    local_server.answers.append((200, {}, json.dumps(TOOL_CALL).encode()))
    env = {"OPENAI_BASE_URL": local_server.base_url, "HOLON_MODEL": "qwen3-coder"}
    provider = make_provider(None, env)
    turn = provider.complete("sys", [UserMessage(text="weather?")], [SHELL], max_tokens=256)
    assert turn.tool_calls == [
        ToolCall(id="call_abc123", name="get_current_weather", arguments={"location": "Boston, MA"})
    ]
    assert turn.stop_reason == "tool_use"
    assert turn.usage == Usage(input_tokens=82, output_tokens=17)
    ((path, headers, body),) = local_server.requests
    assert path == "/v1/chat/completions"
    assert "authorization" not in {k.lower() for k in headers}
    assert body["model"] == "qwen3-coder"
    assert body["max_tokens"] == 256
    assert body["tools"][0]["function"]["name"] == "shell"


def test_a_local_server_with_a_key_gets_it_and_logs_never_show_it(
    local_server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    local_server.answers.append((503, {"retry-after": "0"}, b'{"error": "model loading"}'))
    local_server.answers.append((200, {}, json.dumps(TOOL_CALL).encode()))
    env = {"OPENAI_BASE_URL": local_server.base_url, "OPENAI_API_KEY": OPENAI_KEY}
    turn = make_provider("openai", env).complete("", [UserMessage(text="x")], [], max_tokens=8)
    assert turn.stop_reason == "tool_use"
    sent = [{k.lower(): v for k, v in h.items()} for _, h, _ in local_server.requests]
    assert [h["authorization"] for h in sent] == [f"Bearer {OPENAI_KEY}"] * 2
    assert "HTTP 503 model loading; retrying in 0.0s" in caplog.text
    assert OPENAI_KEY not in caplog.text


def test_nothing_listening_gives_up_naming_the_address(fake_time: FakeTime) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The port is free again: a connection to it is refused.
    from holon.agent.providers.openai import OpenAIProvider

    provider = OpenAIProvider.from_env(
        {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"},
        http=fake_time.http("openai", attempts=3),
    )
    with pytest.raises(ProviderError) as caught:
        provider.complete("", [UserMessage(text="x")], [], max_tokens=8)
    assert str(caught.value) == (
        f"openai: could not connect to http://127.0.0.1:{port} (gave up after 3 attempts in 3s)"
    )
    assert fake_time.waits == [1, 2]
