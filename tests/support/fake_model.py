"""A fake model provider on 127.0.0.1: Anthropic's `/v1/messages` and OpenAI's
`/v1/chat/completions` answered with fixed, usage-bearing bodies over real HTTP/1.1 keep-alive
connections. It checks the key arrives (401 otherwise) and records every request it got.
Used by the key proxy's tests and by `bench.proxy`."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANTHROPIC_ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-fake-1",
    "content": [{"type": "text", "text": "hello from the fake model"}],
    "stop_reason": "end_turn",
    "usage": {
        "input_tokens": 11,
        "output_tokens": 7,
        "cache_creation_input_tokens": 2,
        "cache_read_input_tokens": 1,
    },
}
OPENAI_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-fake-1",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hello from the fake model"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes


@dataclass
class FakeModel:
    key: str
    base_url: str = ""  # http://127.0.0.1:PORT
    requests: list[Seen] = field(default_factory=list)
    status: int = 200  # the status of the next answers (an error body when not 2xx)
    delay: float = 0.0  # seconds before answering
    stream: bool = False  # answer as server-sent events, chunked
    answers: list[dict[str, Any]] = field(default_factory=list)  # Messages answers, in turn
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def anthropic_base(self) -> str:
        return self.base_url

    @property
    def openai_base(self) -> str:
        return self.base_url + "/v1"


def _sse(events: list[tuple[str, dict[str, Any]]]) -> list[bytes]:
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]


ANTHROPIC_EVENTS = [
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "model": "claude-fake-1",
                "usage": {"input_tokens": 30, "output_tokens": 1},
            },
        },
    ),
    ("content_block_delta", {"type": "content_block_delta", "delta": {"text": "hi"}}),
    ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 9}}),
    ("message_stop", {"type": "message_stop"}),
]


@contextmanager
def fake_model(key: str) -> Iterator[FakeModel]:
    state = FakeModel(key=key)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # As a real server does: headers and body, written apart, are not held back by
            # Nagle's algorithm waiting on the client's delayed ACK (40 ms a request).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            with state.lock:
                state.requests.append(Seen("POST", self.path, headers, body))
            if state.delay:
                time.sleep(state.delay)
            if self.path == "/v1/messages":
                ok = headers.get("x-api-key") == state.key and "authorization" not in headers
                with state.lock:
                    answer: dict[str, Any] = (
                        state.answers.pop(0) if ok and state.answers else ANTHROPIC_ANSWER
                    )
            elif self.path == "/v1/chat/completions":
                ok = headers.get("authorization") == f"Bearer {state.key}"
                ok = ok and "x-api-key" not in headers
                answer = OPENAI_ANSWER
            else:
                self._json(404, {"error": "no such path"})
                return
            if not ok:
                self._json(401, {"error": {"type": "authentication_error", "message": "bad key"}})
            elif state.status != 200:
                kind = {"type": "api_error", "message": "the fake is down"}
                self._json(state.status, {"type": "error", "error": kind})
            elif state.stream:
                self._events(_sse(ANTHROPIC_EVENTS))
            else:
                self._json(200, answer)

        def _json(self, status: int, data: Any) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.send_header("request-id", "req_fake")
            self.send_header("set-cookie", "tracking=1")
            self.end_headers()
            self.wfile.write(payload)

        def _events(self, events: list[bytes]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for event in events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
