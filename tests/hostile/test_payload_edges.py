"""Hostile corpus: what reaches Holon's edges as bytes: 25 MB payloads, bytes that are not
UTF-8, and replayed webhook deliveries whose signature does not match.

Through `holon serve --listen` (its own process, dry run): a 25 MB delivery is answered 413 from
its Content-Length before a byte of the body is read (one line, the process's memory flat); a
signed body that is not UTF-8 is answered 400; a captured delivery replayed with a signature
that does not match (another secret, a tampered body, a truncated or re-cased digest, the SHA-1
header only) is answered 401. None of them is journaled: their delivery ids appear in no file
of the state directory, while a good delivery sent first is there (the check is not vacuous).

Through `holon gateway normalize`: a payload file that is not UTF-8 is one line and exit 64,
never 70 and never a log of an internal error.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from holon.gateway.webhook import signature_for
from tests.gateway.conftest import example
from tests.serve.conftest import listening_serve

SECRET = "hostile-edges-secret"
MiB = 1024 * 1024
GOOD_ID = "00000000-0000-4000-8000-00000000600d"


@dataclass
class Served:
    proc: subprocess.Popen[str]
    port: int
    state: Path


def _post(port: int, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/webhook", body=body, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def _headers(delivery: str, signature: str | None, event: str = "issue_comment") -> dict[str, str]:
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery}
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return headers


def _journaled(state: Path, needle: str) -> list[str]:
    return [
        str(path)
        for path in state.rglob("*")
        if path.is_file() and needle.encode() in path.read_bytes()
    ]


def _rss_kib(pid: int, field: str) -> int:
    found = re.search(rf"{field}:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    assert found is not None
    return int(found[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    state = tmp_path_factory.mktemp("edges") / "state"
    proc, port = listening_serve(state, SECRET)
    body = json.dumps(example("issue_comment", "created")).encode()
    status, _ = _post(port, body, _headers(GOOD_ID, signature_for(body, SECRET)))
    assert status == 202
    deadline = time.monotonic() + 10
    while not _journaled(state, GOOD_ID) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _journaled(state, GOOD_ID), "the good delivery was never journaled"
    yield Served(proc, port, state)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)


def _valid_body() -> bytes:
    return json.dumps(example("issue_comment", "created")).encode()


def _tampered(body: bytes) -> bytes:
    return body.replace(b'"created"', b'"deleted"', 1)


# (name, body, signature): a captured delivery replayed with a signature that does not match.
_BODY = _valid_body()
_GOOD_SIG = signature_for(_BODY, SECRET)
REPLAYS: dict[str, tuple[bytes, str | None]] = {
    "signed with another secret": (_BODY, signature_for(_BODY, "the-attackers-secret")),
    "tampered body, original signature": (_tampered(_BODY), _GOOD_SIG),
    "one byte appended": (_BODY + b" ", _GOOD_SIG),
    "digest truncated": (_BODY, _GOOD_SIG[:-2]),
    "digest upper-cased": (_BODY, "sha256=" + _GOOD_SIG.removeprefix("sha256=").upper()),
    "sha1 scheme": (_BODY, "sha1=" + "0" * 40),
    "empty signature": (_BODY, ""),
    "no signature header": (_BODY, None),
    "digest of the empty body": (_BODY, signature_for(b"", SECRET)),
    "signature with trailing newline": (_BODY, _GOOD_SIG + "\n"),
}


@pytest.mark.parametrize("case", sorted(REPLAYS))
def test_a_replayed_delivery_with_a_bad_signature_is_401_and_never_journaled(
    served: Served, case: str
) -> None:
    body, signature = REPLAYS[case]
    delivery = f"bad-signature-{sorted(REPLAYS).index(case):04d}-{os.getpid()}"
    try:
        status, answer = _post(served.port, body, _headers(delivery, signature))
    except (http.client.HTTPException, ValueError):
        # http.client itself refuses a header with a newline: never sent, nothing to journal.
        assert signature is not None
        assert "\n" in signature
        status, answer = 401, b"{}"
    assert status in (400, 401), (status, answer)
    if signature is not None and "\n" not in signature:
        assert status == 401, (status, answer)
    assert b"\n" not in answer.rstrip(b"\n")
    assert served.proc.poll() is None
    assert _journaled(served.state, delivery) == []


# Bodies a correct signature covers that are not UTF-8 (or not JSON text at all).
NOT_UTF8: dict[str, bytes] = {
    "latin-1 title": _BODY.replace(b'"created"', b'"cr\xe9ated"', 1),
    "lone continuation byte": _BODY.replace(b"{", b"{\x80", 1),
    "overlong slash": _BODY.replace(b'"created"', b'"\xc0\xaf"', 1),
    "utf-8 encoded surrogate": _BODY.replace(b'"created"', b'"\xed\xa0\x80"', 1),
    "truncated sequence at the end": _BODY + b"\xe2\x82",
    "utf-16 with a bom": b"\xff\xfe" + _BODY.decode().encode("utf-16-le"),
    "0xff bytes only": b"\xff" * 64,
}


@pytest.mark.parametrize("case", sorted(NOT_UTF8))
def test_a_signed_body_that_is_not_utf8_is_400_and_never_journaled(
    served: Served, case: str
) -> None:
    body = NOT_UTF8[case]
    delivery = f"not-utf8-{sorted(NOT_UTF8).index(case):04d}-{os.getpid()}"
    status, answer = _post(served.port, body, _headers(delivery, signature_for(body, SECRET)))
    assert status == 400, (status, answer)
    assert answer.count(b"\n") <= 1
    assert b"Traceback" not in answer
    assert served.proc.poll() is None
    assert _journaled(served.state, delivery) == []


@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
def test_a_25_mb_delivery_is_413_before_its_body_is_read(served: Served, signed: bool) -> None:
    size = 25 * MiB + 1
    delivery = f"huge-{signed}-{os.getpid()}"
    head = (
        "POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nX-GitHub-Event: issues\r\n"
        f"X-GitHub-Delivery: {delivery}\r\nContent-Length: {size}\r\n"
        + (f"X-Hub-Signature-256: sha256={'0' * 64}\r\n" if signed else "")
        + "\r\n"
    ).encode()
    before = _rss_kib(served.proc.pid, "VmRSS")
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(head + b"{" + b" " * 4096)  # a start only: the answer must not wait
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.split()[1] == b"413", answer
    body = rest.partition(b"\r\n\r\n")[2]
    assert body.strip().count(b"\n") == 0
    assert b"over the" in body
    assert b"limit" in body
    assert _rss_kib(served.proc.pid, "VmRSS") - before < 8 * 1024
    assert _journaled(served.state, delivery) == []


@pytest.mark.parametrize("case", sorted(NOT_UTF8))
def test_gateway_normalize_of_a_payload_that_is_not_utf8_is_one_line_64(
    tmp_path: Path, case: str
) -> None:
    payload = tmp_path / "payload.json"
    payload.write_bytes(NOT_UTF8[case])
    env = {**os.environ, "HOLON_LOG_DIR": str(tmp_path / "logs")}
    argv = [sys.executable, "-m", "holon", "gateway", "normalize", "--event", "issue_comment"]
    proc = subprocess.run(
        [*argv, "--payload", str(payload)], capture_output=True, env=env, check=False
    )
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith("holon: error: "), err
    assert proc.stdout == b""
    assert not (tmp_path / "logs").exists()
