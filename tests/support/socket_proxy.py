"""A unix-socket proxy in front of the Docker engine whose open connections can be cut.

Lets a test make the real engine "go away" in the middle of a call, while new connections (the
clean-up that follows) still reach it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path


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
        self._open: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.upstream)
            with self._lock:
                self._open += [client, engine]
            for src, dst in ((client, engine), (engine, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        """Drop every connection open now, as an engine restart would."""
        with self._lock:
            victims, self._open = self._open, []
        for sock in victims:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self._listener.close()
        self.cut()
