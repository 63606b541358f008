"""The Docker Engine calls of a run that goes well, spoken directly on the engine's unix socket:
the image's inspection, the container's create, attach, start, wait and removal.

The docker SDK stands on `requests`, `urllib3` and `ssl`; importing it costs a short `holon run`
more CPU than anything else before its container exists, and as much again while the engine
starts it. So the docker backend makes these calls itself, with exactly the requests the SDK
makes for them (the API version the engine reports, the same paths, queries and bodies:
`create_body`), and imports the SDK only for the rest (stop, kill, the OOM check). This is a fast
path: whenever it has no answer (another `DOCKER_HOST` than a unix socket, an engine that refuses
or breaks off), the backend makes the same call through the SDK, whose answer and errors are
then the run's; only the wait's two outcomes are its own (`EngineTimeout`: the agent's time ran
out; `EngineLost`: the engine went, worded as the SDK words it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

from holon.runner.timeline import mark

DEFAULT_SOCKET = "/var/run/docker.sock"
TIMEOUT = 60.0  # the SDK's default timeout for an API call
_MAX_HEADER = 64 * 1024
_API_VERSION = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}")
_MAX_BODY = 16 * 1024 * 1024


class EngineError(Exception):
    """The fast path could not make its call (the SDK then makes it)."""


class EngineTimeout(EngineError):
    """No answer within the call's timeout (for the wait: the agent's time ran out)."""


class EngineLost(EngineError):
    """The connection broke off; worded as the SDK's `requests` words it."""

    @classmethod
    def aborted(cls, exc: BaseException | None) -> EngineLost:
        """Before a reply: urllib3's "Connection aborted." with its cause."""
        cause = (
            repr(exc)
            if exc is not None
            else "RemoteDisconnected('Remote end closed connection without response')"
        )
        return cls(f"('Connection aborted.', {cause})")


class _Premature(ValueError):
    """The reply's body ended before its end."""


def _failed(exc: OSError | ValueError) -> EngineError:
    if isinstance(exc, TimeoutError):
        return EngineTimeout("timed out")
    if isinstance(exc, _Premature):
        return EngineLost("Response ended prematurely")  # requests' ChunkedEncodingError
    if isinstance(exc, OSError):
        return EngineLost.aborted(exc)
    return EngineError(str(exc) or exc.__class__.__name__)


def socket_path(environ: Mapping[str, str] | None = None) -> str | None:
    """The engine's unix socket as the SDK's `from_env` finds it, or None for another host."""
    host = (environ if environ is not None else os.environ).get("DOCKER_HOST")
    if not host:
        return DEFAULT_SOCKET
    if host.startswith("unix://"):
        path = host.removeprefix("unix://")
        return path or None
    return None


def _env_list(env: Mapping[str, str]) -> list[str]:
    # The SDK's `format_environment`, for the str values a run's environment holds.
    return [f"{key}={value}" for key, value in env.items()]


def create_body(
    image: str,
    *,
    env: Mapping[str, str],
    user: str,
    working_dir: str,
    labels: Mapping[str, str],
    mounts: list[tuple[str, str, bool]],  # (target, source, read_only)
    security_opt: list[str],
    log_type: str,
    network_mode: str,
    networking: dict[str, Any] | None,
    nano_cpus: int | None = None,
    mem_limit: int | None = None,
    entrypoint: list[str] | None = None,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """The body of `POST /containers/create` the SDK sends for `create_container(image,
    detach=True, ...)` with this host config (its None fields left out, as the SDK does)."""
    host: dict[str, Any] = {}
    if mem_limit is not None:
        host["Memory"] = mem_limit
    host["NetworkMode"] = network_mode
    host["SecurityOpt"] = list(security_opt)
    host["LogConfig"] = {"Type": log_type, "Config": {}}
    if nano_cpus:
        host["NanoCpus"] = nano_cpus
    if mounts:
        host["Mounts"] = [
            {"Target": target, "Source": source, "Type": "bind", "ReadOnly": read_only}
            for target, source, read_only in mounts
        ]
    body: dict[str, Any] = {
        "User": user,
        "Tty": False,
        "OpenStdin": False,
        "StdinOnce": False,
        "AttachStdin": False,
        "AttachStdout": False,
        "AttachStderr": False,
        "Env": _env_list(env),
    }
    if command is not None:
        body["Cmd"] = list(command)
    body["Image"] = image
    body["NetworkDisabled"] = False
    if entrypoint is not None:
        body["Entrypoint"] = list(entrypoint)
    body["WorkingDir"] = working_dir
    body["HostConfig"] = host
    if networking is not None:
        body["NetworkingConfig"] = networking
    body["Labels"] = dict(labels)
    return body


class _Reply:
    def __init__(self, status: int, headers: dict[str, str], reader: Any, sock: socket.socket):
        self.status = status
        self.headers = headers
        self.reader = reader
        self.sock = sock


class Engine:
    """Requests to the engine on its unix socket, one connection each."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.version: str | None = None

    def _send(
        self,
        method: str,
        target: str,
        body: bytes | None,
        extra: str = "",
        timeout: float = TIMEOUT,
    ) -> _Reply:
        return self._reply(self._request(method, target, body, extra, timeout))

    def _request(
        self, method: str, target: str, body: bytes | None, extra: str, timeout: float
    ) -> socket.socket:
        """A new connection with the request sent on it (its reply not read yet)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.connect(self.path)
            head = f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n{extra}"
            if body is not None:
                head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            sock.sendall(head.encode("latin-1") + b"\r\n" + (body or b""))
        except (OSError, ValueError) as exc:
            sock.close()
            raise _failed(exc) from None
        except BaseException:
            sock.close()
            raise
        return sock

    @staticmethod
    def _reply(sock: socket.socket) -> _Reply:
        """The status and headers of the reply on `sock` (closed if they cannot be read)."""
        try:
            reader = sock.makefile("rb")
            status_line = reader.readline(_MAX_HEADER)
            if not status_line:
                raise EngineLost.aborted(None)
            parts = status_line.split(None, 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
                raise EngineError("not an HTTP reply")
            headers: dict[str, str] = {}
            size = 0
            while True:
                line = reader.readline(_MAX_HEADER)
                size += len(line)
                if not line or size > _MAX_HEADER:
                    raise EngineError("reply headers cut short or too long")
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            return _Reply(int(parts[1]), headers, reader, sock)
        except (OSError, ValueError) as exc:
            sock.close()
            raise _failed(exc) from None
        except BaseException:
            sock.close()
            raise

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        timeout: float = TIMEOUT,
        meanwhile: Callable[[], None] | None = None,
    ) -> tuple[int, Any]:
        """The call's status and JSON body; `meanwhile` is called once the request is sent,
        before its answer is read (the connection is closed whatever it raises)."""
        data = None if body is None else json.dumps(body).encode()
        what = f"{method} {path[:40]}"
        mark(f"engine {what} sent")
        sock = self._request(method, path, data, "Connection: close\r\n", timeout)
        if meanwhile is not None:
            try:
                meanwhile()
            except BaseException:
                sock.close()
                raise
            mark(f"engine {what}: meanwhile done")
        reply = self._reply(sock)
        mark(f"engine {what} answered {reply.status}")
        return self._answer(reply)

    def _answer(self, reply: _Reply) -> tuple[int, Any]:
        """The reply's status and its JSON body; its connection closed."""
        try:
            raw = self._body(reply)
        except (OSError, ValueError) as exc:
            raise _failed(exc) from None
        finally:
            reply.reader.close()
            reply.sock.close()
        if not raw:
            return reply.status, None
        try:
            return reply.status, json.loads(raw)
        except ValueError:
            raise EngineError("the engine's reply is not JSON") from None

    @staticmethod
    def _body(reply: _Reply) -> bytes:
        if reply.status in (101, 204, 304) or reply.status < 200:
            return b""
        if reply.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            total = 0
            while True:
                line = reply.reader.readline(_MAX_HEADER)
                if not line:
                    raise _Premature("reply cut short")
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    return b"".join(chunks)
                total += size
                if total > _MAX_BODY:
                    raise ValueError("reply too long")
                chunk = reply.reader.read(size)
                if len(chunk) != size:
                    raise _Premature("reply cut short")
                chunks.append(chunk)
                reply.reader.readline(_MAX_HEADER)
        length = int(reply.headers.get("content-length", "-1"))
        if length < 0 or length > _MAX_BODY:
            raise ValueError("reply without a usable length")
        data: bytes = reply.reader.read(length)
        if len(data) != length:
            raise _Premature("reply cut short")
        return data

    def _url(self, path: str) -> str:
        if self.version is None:
            self.version = self._ping_version() or self._asked_version()
        return f"/v{self.version}{path}"

    def _ping_version(self) -> str | None:
        """The engine's API version from the `Api-Version` header of `GET /_ping` (as the docker
        CLI reads it): the version `/version` gives, without the engine asking its runtimes
        for theirs (about 5 ms of the engine's CPU, beside the snapshot's git processes)."""
        mark("engine GET /_ping sent")
        reply = self._send("GET", "/_ping", None, "Connection: close\r\n")
        try:
            self._body(reply)
        except (OSError, ValueError) as exc:
            raise _failed(exc) from None
        finally:
            reply.reader.close()
            reply.sock.close()
        mark(f"engine GET /_ping answered {reply.status}")
        version = reply.headers.get("api-version", "")
        return version if reply.status == 200 and _API_VERSION.fullmatch(version) else None

    def _asked_version(self) -> str:
        status, answer = self._call("GET", "/version")
        version = answer.get("ApiVersion") if isinstance(answer, dict) else None
        if status != 200 or not isinstance(version, str) or not version:
            raise EngineError("the engine did not give its API version")
        return version

    def inspect_image(self, name: str) -> dict[str, Any]:
        status, answer = self._call("GET", self._url(f"/images/{quote(name, safe='/:')}/json"))
        if status != 200 or not isinstance(answer, dict):
            raise EngineError(f"image inspection answered {status}")
        return answer

    def create(self, body: dict[str, Any]) -> str:
        status, answer = self._call("POST", self._url("/containers/create"), body)
        ident = answer.get("Id") if isinstance(answer, dict) else None
        if status != 201 or not isinstance(ident, str) or not ident:
            raise EngineError(f"container create answered {status}")
        return ident

    def start(self, ident: str, meanwhile: Callable[[], None] | None = None) -> None:
        """Start the container; `meanwhile` is called once the request is sent, before its
        answer is read: the engine takes a few hundred ms to start a container, during which
        this process has nothing else to do (its connection is closed whatever it raises)."""
        path = self._url(f"/containers/{quote(ident, safe='/:')}/start")
        status, _ = self._call("POST", path, meanwhile=meanwhile)
        if status not in (204, 304):
            raise EngineError(f"container start answered {status}")

    def wait(self, ident: str, timeout: float) -> dict[str, Any]:
        """The container's exit (`{"StatusCode": ...}`), as the SDK's `wait(timeout=...)`:
        EngineTimeout when no answer comes within `timeout`, EngineLost when the engine goes."""
        path = self._url(f"/containers/{quote(ident, safe='/:')}/wait")
        status, answer = self._call("POST", path, timeout=timeout)
        return _exit_of(status, answer)

    def expect_exit(self, ident: str) -> ExitWait:
        """The wait for the container's next exit, asked now, before its start (as `docker
        run` asks it): the engine answers when the container started afterwards exits, and no
        round trip separates the start from the wait (`ExitWait.result`)."""
        path = self._url(f"/containers/{quote(ident, safe='/:')}/wait?condition=next-exit")
        mark("engine wait (next exit) sent")
        return ExitWait(self, self._request("POST", path, None, "Connection: close\r\n", TIMEOUT))

    def remove(self, ident: str) -> None:
        """`remove(force=True)` of the SDK: the container and its anonymous volumes kept."""
        query = "?v=False&link=False&force=True"
        status, _ = self._call("DELETE", self._url(f"/containers/{quote(ident, safe='/:')}{query}"))
        if status != 204:
            raise EngineError(f"container remove answered {status}")

    def attach(self, ident: str) -> Stream:
        """The container's output from now on (stdout and stderr, as the engine frames them)."""
        target = self._url(
            f"/containers/{quote(ident, safe='/:')}/attach?logs=0&stdout=1&stderr=1&stream=1"
        )
        reply = self._send("POST", target, b"", "Connection: Upgrade\r\nUpgrade: tcp\r\n")
        if reply.status not in (101, 200):
            reply.reader.close()
            reply.sock.close()
            raise EngineError(f"attach answered {reply.status}")
        reply.sock.settimeout(None)  # the agent may be silent for as long as it runs
        return Stream(reply.reader, reply.sock)


def _exit_of(status: int, answer: Any) -> dict[str, Any]:
    if status != 200 or not isinstance(answer, dict):
        raise EngineError(f"container wait answered {status}")
    return answer


class ExitWait:
    """A wait sent before the container's start (`Engine.expect_exit`): `result` reads its
    answer, `close` gives it up; either closes its connection."""

    def __init__(self, engine: Engine, sock: socket.socket) -> None:
        self._engine = engine
        self._sock: socket.socket | None = sock

    def result(self, timeout: float) -> dict[str, Any]:
        """The exit, as `Engine.wait(ident, timeout)` gives it, `timeout` counted from now."""
        sock, self._sock = self._sock, None
        if sock is None:
            raise EngineError("the wait was given up")
        try:
            sock.settimeout(timeout)
        except OSError as exc:
            sock.close()
            raise _failed(exc) from None
        answer = self._engine._answer(self._engine._reply(sock))
        mark(f"engine wait (next exit) answered {answer[0]}")
        return _exit_of(*answer)

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


class Stream:
    """The attached output: iterates over the payloads of the engine's frames (the SDK's
    `frames_iter_no_tty`: an 8-byte header, stream and length, then the data), like the SDK's
    attach stream; `close` ends it."""

    def __init__(self, reader: Any, sock: socket.socket) -> None:
        self._reader = reader
        self._sock = sock

    def __iter__(self) -> Iterator[bytes]:
        while True:
            header = self._read_exact(8)
            if len(header) < 8:
                return
            left = int.from_bytes(header[4:8], "big")
            while left > 0:
                data = self._reader.read1(min(left, 65536))
                if not data:
                    return
                left -= len(data)
                yield data

    def _read_exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            more = self._reader.read1(n - len(data))
            if not more:
                break
            data += more
        return data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._reader.close()
        self._sock.close()
