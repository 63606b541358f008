"""The key proxy's fixtures: a fake model on loopback, a running proxy in front of it, and a
plain HTTP/1.1 client over the proxy's unix socket."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from holon.runner.model_proxy import ModelProxy, ProxyLimits
from holon.runner.model_routes import routes_for
from tests.support.fake_model import FakeModel, fake_model

# Distinctive, so a search for it finds nothing by chance.
KEY = "sk-ant-proxytest-5f0c2d9e7a1b4c3d8e6f"


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float = 10) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = str(path)

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    path: Path,
    method: str,
    target: str,
    body: bytes | None = b"{}",
    headers: dict[str, str] | None = None,
    connection: UnixConnection | None = None,
) -> Answer:
    conn = connection or UnixConnection(path)
    try:
        conn.request(method, target, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, data)
    finally:
        if connection is None:
            conn.close()


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    with fake_model(KEY) as model:
        yield model


def start_proxy(
    fake: FakeModel,
    *,
    keys: dict[str, str] | None = None,
    token_cap: int | None = None,
    limits: ProxyLimits | None = None,
) -> ModelProxy:
    keys = keys if keys is not None else {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY}
    env = {"ANTHROPIC_BASE_URL": fake.anthropic_base, "OPENAI_BASE_URL": fake.openai_base}
    proxy = ModelProxy(routes_for(keys, env, {}), token_cap=token_cap, limits=limits)
    proxy.start()
    return proxy


@pytest.fixture
def proxy(fake: FakeModel) -> Iterator[ModelProxy]:
    running = start_proxy(fake)
    try:
        yield running
    finally:
        running.stop()


CLIENT_SOURCE = Path(__file__).with_name("unix_client.c")
CACHE = Path(__file__).resolve().parents[2] / ".cache" / "test-images"


@pytest.fixture(scope="session")
def unix_client() -> Path | None:
    """A static HTTP-over-unix-socket client for the busybox test image (`unix_client.c`), built
    once with the host's C compiler and cached by the source's hash; None where none builds."""
    import hashlib
    import os
    import shutil
    import subprocess

    source = CLIENT_SOURCE.read_bytes()
    target = CACHE / f"unix-client-{hashlib.sha256(source).hexdigest()[:12]}"
    if target.is_file():
        return target
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".{os.getpid()}")
    proc = subprocess.run(
        [compiler, "-static", "-Os", "-o", str(partial), str(CLIENT_SOURCE)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:  # no static C library here
        partial.unlink(missing_ok=True)
        return None
    os.replace(partial, target)
    return target
