"""A unix-socket proxy in front of the Docker engine whose connections can be cut.

Lets a test make the real engine "go away" in the middle of one call (say, the wait for a
container), while other connections and new ones (the clean-up that follows) still reach it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

_METHODS = (b"GET ", b"POST ", b"PUT ", b"DELETE ", b"HEAD ")


def engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    return host.removeprefix("unix://")


class SocketProxy:
    def __init__(self, path: Path, upstream: str) -> None:
        self.path = path
        self.upstream = upstream
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(16)
        self._lock = threading.Lock()
        # Each open connection: its two sockets and the last request line the client sent.
        self._open: dict[int, tuple[socket.socket, socket.socket]] = {}
        self._last_request: dict[int, bytes] = {}
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.upstream)
            key = client.fileno()
            with self._lock:
                self._open[key] = (client, engine)
            threading.Thread(target=self._pipe, args=(client, engine, key), daemon=True).start()
            threading.Thread(target=self._pipe, args=(engine, client, None), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, key: int | None) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if key is not None and data.startswith(_METHODS):
                    with self._lock:
                        self._last_request[key] = data.split(b"\r\n", 1)[0]
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def cut_when(self, marker: bytes, timeout: float = 60.0) -> bool:
        """Drop the connection whose current request line holds `marker`, once there is one."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                keys = [k for k, line in self._last_request.items() if marker in line]
                victims = [self._open.pop(k) for k in keys if k in self._open]
                for key in keys:
                    self._last_request.pop(key, None)
            if victims:
                for pair in victims:
                    for sock in pair:
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)
                        sock.close()
                return True
            time.sleep(0.02)
        return False

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            pairs, self._open = list(self._open.values()), {}
        for pair in pairs:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
