"""The agent's side of the host's model key proxy: HTTP over the unix socket HOLON_MODEL_PROXY
names, with no key.

In a container run given a model key, the runner keeps the key on the host and mounts a socket
instead (`holon/runner/model_proxy.py` adds the key to what it forwards); the container has no
other network. The providers then send their usual requests, without credentials, to a fixed
placeholder origin that a requests session routes to that socket (`unix_session`).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

import requests
import urllib3.connection
import urllib3.connectionpool
from requests.adapters import HTTPAdapter

from holon.agent.providers.base import ProviderError
from holon.contract.layout import (
    ENV_MODEL_PROVIDER,
    ENV_MODEL_PROXY,
    ENV_MODEL_PROXY_OPENAI_ITSELF,
)

# Requests are addressed to this origin; the session never resolves it, it opens the socket.
ORIGIN = "http://model-proxy"
ANTHROPIC_BASE = ORIGIN  # the provider adds /v1/messages
OPENAI_BASE = ORIGIN + "/v1"  # the provider adds /chat/completions


def socket_path(env: Mapping[str, str]) -> str | None:
    """The proxy's socket when the run is proxied, else None."""
    value = env.get(ENV_MODEL_PROXY, "").strip()
    if not value:
        return None
    if not value.startswith("/") or "\0" in value or len(value.encode()) > 107:
        raise ProviderError(f"{ENV_MODEL_PROXY} is not an absolute path to a unix socket")
    return value


def provider(env: Mapping[str, str]) -> str | None:
    """The provider the proxy serves first, as the runner told the agent."""
    value = env.get(ENV_MODEL_PROVIDER, "").strip().lower()
    return value or None


def openai_itself(env: Mapping[str, str]) -> bool:
    """Whether the proxy's OpenAI upstream is OpenAI's own API (it takes other parameters)."""
    return env.get(ENV_MODEL_PROXY_OPENAI_ITSELF, "1").strip() != "0"


class _UnixConnection(urllib3.connection.HTTPConnection):
    def __init__(self, path: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._socket_path = path

    def _new_conn(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout if isinstance(self.timeout, int | float) else None)
            sock.connect(self._socket_path)
        except OSError as exc:
            sock.close()
            # urllib3 turns this into requests' ConnectionError: retried, never a crash.
            raise urllib3.exceptions.NewConnectionError(
                self, f"cannot connect to the model proxy ({exc.strerror or 'error'})"
            ) from None
        return sock


class _UnixPool(urllib3.connectionpool.HTTPConnectionPool):
    def __init__(self, path: str, **kwargs: Any) -> None:
        super().__init__("model-proxy", **kwargs)
        self._socket_path = path

    def _new_conn(self) -> urllib3.connection.HTTPConnection:
        self.num_connections += 1
        return _UnixConnection(
            self._socket_path,
            host=self.host,
            port=self.port,
            timeout=self.timeout.connect_timeout,
        )


class UnixAdapter(HTTPAdapter):
    """Every request through this adapter goes to one unix socket, whatever its URL says."""

    def __init__(self, path: str) -> None:
        super().__init__(max_retries=0)
        self._pool = _UnixPool(path, maxsize=4)

    def get_connection_with_tls_context(
        self,
        request: requests.PreparedRequest,
        verify: bool | str | None,
        proxies: Mapping[str, str] | None = None,
        cert: Any = None,
    ) -> urllib3.connectionpool.HTTPConnectionPool:
        return self._pool

    def get_connection(
        self, url: str | bytes, proxies: Mapping[str, str] | None = None
    ) -> urllib3.connectionpool.HTTPConnectionPool:
        return self._pool

    def close(self) -> None:
        self._pool.close()
        super().close()


def unix_session(path: str) -> requests.Session:
    """A session that sends ORIGIN's requests over the socket at `path`, and nothing else."""
    session = requests.Session()
    session.trust_env = False  # no environment proxy, no ~/.netrc: the socket is the only way
    session.adapters.clear()
    session.mount(ORIGIN + "/", UnixAdapter(path))
    return session
