"""A local-runtime agent that hunts for its run's model key wherever it can look, then asks its
model once through the key proxy. It does not know the key: it copies everything it read into
<output>/dump for the test to search, with what it was refused (`refused.json`)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import stat
from pathlib import Path

LIMIT = 1024 * 1024  # bytes read of one file

out = Path(os.environ["HOLON_OUTPUT_DIR"])
dump = out / "dump"
dump.mkdir()
refused: dict[str, str] = {}

(dump / "env.json").write_text(json.dumps(dict(os.environ), indent=1))

# Every process's environment and command line, the runner's (our parent's) included.
with (dump / "proc.bin").open("wb") as sink:
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
        for name in ("environ", "cmdline"):
            try:
                data = Path(f"/proc/{pid}/{name}").read_bytes()
            except OSError as exc:
                refused[f"{pid}/{name}"] = type(exc).__name__
            else:
                sink.write(f"== /proc/{pid}/{name}\n".encode() + data + b"\n")
# The runner's (our parent's) memory: opening it is what takes a tracer's rights.
try:
    with open(f"/proc/{os.getppid()}/mem", "rb"):
        refused["parent/mem"] = "opened"
except OSError as exc:
    refused["parent/mem"] = type(exc).__name__

# Every regular file it can read under the run's directories and its temp dir (where the
# runner's own run root and the proxy's socket directory are), never following a link.
roots = {os.environ.get("TMPDIR", "/tmp"), os.environ["HOLON_INPUT_DIR"], os.getcwd()}
with (dump / "files.bin").open("wb") as sink:
    for root in sorted(roots):
        for top, _dirs, files in os.walk(root, followlinks=False):
            for name in files:
                path = os.path.join(top, name)
                try:
                    if not stat.S_ISREG(os.lstat(path).st_mode):
                        continue
                    with open(path, "rb") as handle:
                        data = handle.read(LIMIT)
                except OSError as exc:
                    refused[path] = type(exc).__name__
                    continue
                sink.write(f"== {path}\n".encode() + data + b"\n")
(dump / "refused.json").write_text(json.dumps(refused, indent=1))


class UnixConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(os.environ["HOLON_MODEL_PROXY"])


if os.environ.get("HOLON_MODEL_PROXY"):
    message = {"role": "user", "content": "hi"}
    body = {"model": "claude-fake-1", "max_tokens": 5, "messages": [message]}
    connection = UnixConnection("model-proxy")
    headers = {"content-type": "application/json", "x-api-key": "guessed"}
    connection.request("POST", "/v1/messages", json.dumps(body), headers)
    answer = connection.getresponse()
    (dump / "answer.json").write_text(
        json.dumps({"status": answer.status, "body": answer.read().decode()})
    )
    connection.close()

(out / "manifest.json").write_text('{"status":"completed","outcome":"success"}')
