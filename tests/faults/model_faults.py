"""A model provider on 127.0.0.1 that fails: OpenAI's `/v1/chat/completions` answered by a
fault mode, for the agent's runs against a provider in trouble.

- `rate_limit_storm`: every request 429 with `Retry-After: 0` (the retry budget runs out);
- `garbled`: 200 with a body that is not JSON;
- `truncated`: 200 with the first half of a real answer (the stream cut short);
- `cut_mid_body`: 200 announcing the whole answer's length, half of it sent, then the connection
  closed (the body broken off mid-JSON);

and the timeouts (`TIMEOUT_FAULTS`), each holding the connection open while the client waits:

- `silent`: the request read, never an answer;
- `slow`: the answer sent `SLOW_SECONDS` late (past the short read timeout of the tests);
- `stall_mid_body`: 200 and half of the answer, then nothing more.

A held connection is let go when the fake stops, so no thread outlives the test.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.support.fake_model import OPENAI_ANSWER

ModelFault = Literal[
    "rate_limit_storm",
    "garbled",
    "truncated",
    "cut_mid_body",
    "silent",
    "slow",
    "stall_mid_body",
]
MODEL_FAULTS: tuple[ModelFault, ...] = ("rate_limit_storm", "garbled", "truncated")
TIMEOUT_FAULTS: tuple[ModelFault, ...] = ("silent", "slow", "stall_mid_body")
SLOW_SECONDS = 4.0
HOLD_SECONDS = 60.0  # the longest a held connection is kept when the fake is not stopped


@dataclass
class FaultyModel:
    mode: ModelFault
    base_url: str = ""
    requests: list[str] = field(default_factory=list)


@contextmanager
def faulty_model(mode: ModelFault) -> Iterator[FaultyModel]:
    model = FaultyModel(mode)
    released = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            model.requests.append(self.path)
            headers: dict[str, str] = {}
            answer = json.dumps(OPENAI_ANSWER).encode()
            if model.mode == "silent":
                released.wait(HOLD_SECONDS)
                self.close_connection = True
                return
            if model.mode == "slow" and released.wait(SLOW_SECONDS):
                return
            if model.mode in ("stall_mid_body", "cut_mid_body"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer[: len(answer) // 2])
                self.wfile.flush()
                if model.mode == "stall_mid_body":
                    released.wait(HOLD_SECONDS)
                self.close_connection = True
                return
            if model.mode == "rate_limit_storm":
                status = 429
                body = json.dumps({"error": {"type": "rate_limit_error", "message": "Slow down"}})
                headers["Retry-After"] = "0"
            elif model.mode == "garbled":
                status, body = 200, "<html>upstream proxy says hello</html>"
            elif model.mode == "slow":
                status, body = 200, answer.decode()
            else:
                status, body = 200, answer.decode()[:60]
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                self.close_connection = True  # a client that gave up (`slow`) closed its end

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    model.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield model
    finally:
        released.set()
        server.shutdown()
        server.server_close()
        thread.join()
