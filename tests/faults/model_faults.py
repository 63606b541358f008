"""A model provider on 127.0.0.1 that fails: OpenAI's `/v1/chat/completions` answered by a
fault mode, for the agent's runs against a provider in trouble.

- `rate_limit_storm`: every request 429 with `Retry-After: 0` (the retry budget runs out);
- `garbled`: 200 with a body that is not JSON;
- `truncated`: 200 with the first half of a real answer (the stream cut short);
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

ModelFault = Literal["rate_limit_storm", "garbled", "truncated"]
MODEL_FAULTS: tuple[ModelFault, ...] = ("rate_limit_storm", "garbled", "truncated")


@dataclass
class FaultyModel:
    mode: ModelFault
    base_url: str = ""
    requests: list[str] = field(default_factory=list)


@contextmanager
def faulty_model(mode: ModelFault) -> Iterator[FaultyModel]:
    model = FaultyModel(mode)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            self.rfile.read(length)
            model.requests.append(self.path)
            headers: dict[str, str] = {}
            if model.mode == "rate_limit_storm":
                status = 429
                body = json.dumps({"error": {"type": "rate_limit_error", "message": "Slow down"}})
                headers["Retry-After"] = "0"
            elif model.mode == "garbled":
                status, body = 200, "<html>upstream proxy says hello</html>"
            else:
                status, body = 200, json.dumps(OPENAI_ANSWER)[:60]
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

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
        server.shutdown()
        server.server_close()
        thread.join()
