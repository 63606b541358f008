"""What serve keeps of what it accepted: failures inside Holon, kills, stops, idle checkpoints."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.controller.facts import StaticFacts
from holon.gateway.webhook import signature_for
from holon.serve.report import describe_run
from holon.serve.serve import Serve, ServeOptions
from tests.gateway.conftest import example
from tests.serve.conftest import holon_argv, listening_serve, serve_env

SECRET = "intake-secret-for-tests"
REPO = "Codertocat/Hello-World"


def comment_payload(comment_id: int, login: str = "Codertocat") -> dict[str, Any]:
    payload = example("issue_comment", "created")
    payload["comment"].update(id=comment_id, body="/holon solve", author_association="MEMBER")
    payload["comment"]["user"]["login"] = login
    payload["sender"]["login"] = login
    payload["issue"]["number"] = comment_id
    return payload


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class CrashingFacts(StaticFacts):
    """A bug inside Holon, reached by one event: looking up `crasher`'s permission raises."""

    def permission(self, repo: str, login: str) -> Any:
        if login == "crasher":
            raise RuntimeError("a bug in Holon's own code")
        return "write"


def test_an_event_holon_fails_on_is_journaled_and_the_loop_goes_on(tmp_path: Path) -> None:
    replay = tmp_path / "replay.ndjson"
    with replay.open("w") as handle:
        for number, login in ((1, "crasher"), (2, "octocat")):
            delivery = {"event": "issue_comment", "delivery": f"d-{number}"}
            handle.write(json.dumps({**delivery, "payload": comment_payload(number, login)}) + "\n")
    reported: list[str] = []
    serve = Serve(
        ServeOptions(state_dir=tmp_path / "s", replay=[replay], dry_run=True, once=True),
        facts=CrashingFacts(),
        clock=lambda: datetime(2026, 11, 23, 12, 0, tzinfo=UTC),
        report=reported.append,
    )
    serve.open()
    try:
        code = serve.run()
    finally:
        serve.close()
    events = lines(tmp_path / "s" / "events.ndjson")
    (failed,) = [e for e in events if e["id"].startswith("failed:")]
    assert "internal error RuntimeError" in failed["error"]
    assert "traceback in " in failed["error"]
    assert "bug in Holon" not in failed["error"]  # the message may quote input: class only
    decided = [d for d in lines(tmp_path / "s" / "decisions.ndjson") if d["outcome"] == "decided"]
    assert [d["subject"] for d in decided] == ["issue:2"]  # the next event was decided
    assert code == 1  # an event whose work was never decided is never success
    assert reported == [f"holon serve: {failed['error']}"]
    did, why = describe_run(serve, code)
    assert "2 events handled" in did
    assert "1 failed inside Holon" in did
    assert why.startswith("exit 1: 1 event failed inside Holon")


def _post(port: int, body: bytes, delivery: str) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(
            "POST",
            "/webhook",
            body=body,
            headers={
                "X-GitHub-Event": "issue_comment",
                "X-GitHub-Delivery": delivery,
                "X-Hub-Signature-256": signature_for(body, SECRET),
            },
        )
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_a_signed_lone_surrogate_is_refused_and_serve_goes_on(tmp_path: Path) -> None:
    state = tmp_path / "s"
    proc, port = listening_serve(state, SECRET)
    try:
        poisoned = json.dumps(comment_payload(1)).replace("/holon solve", "\\ud800").encode()
        status, answer = _post(port, poisoned, "poison")
        assert status == 400  # refused before it was accepted: nothing to lose
        assert "lone surrogate" in answer["error"]
        status, answer = _post(port, json.dumps(comment_payload(2)).encode(), "good")
        assert status == 202
        deadline = time.monotonic() + 20
        while not any(d["event_id"] == answer["id"] for d in lines(state / "decisions.ndjson")):
            assert time.monotonic() < deadline, "the good delivery was never decided"
            assert proc.poll() is None, "serve died"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "exit 0: stopped by a signal" in out


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_no_delivery_answered_202_is_lost_when_serve_stops_under_load(
    tmp_path: Path, stop: signal.Signals
) -> None:
    state = tmp_path / "s"
    proc, port = listening_serve(state, SECRET)
    accepted: list[str] = []
    lock = threading.Lock()
    running = threading.Event()
    running.set()

    def sender(index: int) -> None:
        n = 0
        while running.is_set():
            n += 1
            comment_id = index * 100_000 + n
            try:
                status, answer = _post(port, json.dumps(comment_payload(comment_id)).encode(), "x")
            except (OSError, http.client.HTTPException):
                return  # serve is gone: what it answered 202 before is what must survive
            if status == 202:
                with lock:
                    accepted.append(answer["id"])

    try:
        senders = [threading.Thread(target=sender, args=(i,)) for i in range(1, 9)]
        for thread in senders:
            thread.start()
        time.sleep(1.5)
        proc.send_signal(stop)
        proc.communicate(timeout=30)
    finally:
        running.clear()
        proc.kill()
    for thread in senders:
        thread.join(30)
    assert len(accepted) > 20  # the stop really came under load
    # A new serve takes what the stopped one kept and had not finished.
    finish = subprocess.run(
        holon_argv("serve", "--state-dir", str(state), "--dry-run", "--once"),
        env=serve_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finish.returncode in (0, 2, 3), finish.stderr
    journaled = Counter(e["id"] for e in lines(state / "events.ndjson"))
    assert [i for i in accepted if i not in journaled] == []
    decided = Counter(d["event_id"] for d in lines(state / "decisions.ndjson"))
    assert all(decided[i] >= 1 for i in accepted)
    if stop == signal.SIGTERM:  # a clean stop saves everything: each one decided exactly once
        assert {i: decided[i] for i in accepted if decided[i] != 1} == {}
    actions = [a["id"] for a in lines(state / "actions.ndjson")]
    assert len(actions) == len(set(actions))  # no effect performed twice


def test_an_idle_serve_checkpoints_what_it_accepted_within_seconds(tmp_path: Path) -> None:
    state = tmp_path / "s"
    proc, port = listening_serve(state, SECRET)
    try:
        status, answer = _post(port, json.dumps(comment_payload(5)).encode(), "one")
        assert status == 202
        sent = time.monotonic()
        while True:
            shown = subprocess.run(
                holon_argv("serve", "status", "--state-dir", str(state), "--json"),
                env=serve_env(),
                capture_output=True,
                text=True,
                timeout=30,
            )
            last = json.loads(shown.stdout)["last_event"]
            if last is not None and last["id"] == answer["id"]:
                break
            # docs/serve.md: a checkpoint within 5 s of any change, with nothing else arriving.
            assert time.monotonic() - sent < 8, "status still does not show the delivery"
            time.sleep(0.25)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
