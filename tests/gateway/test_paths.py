"""Three ways in (Actions run, webhook delivery, replay file), one envelope and one key."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.errors import InvalidInput
from holon.gateway.actions import from_actions
from holon.gateway.replay import read_replay
from holon.gateway.webhook import SignatureError, from_webhook, signature_for, verify_signature
from tests.gateway.conftest import example

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SECRET = "s3cret-for-tests"


def _webhook(event: str, payload: dict[str, Any], delivery: str = "d-1", **kw: Any) -> Any:
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature_for(body, SECRET),
    }
    return from_webhook(headers, body, [SECRET], received_at=NOW, **kw)


def _actions(tmp_path: Path, event: str, payload: dict[str, Any], **env: str) -> Any:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    full = {
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": "octo-org/octo-repo",
        "GITHUB_RUN_ID": "4242",
        **env,
    }
    return from_actions(full, received_at=NOW)


def _replay(*lines: dict[str, Any]) -> list[Any]:
    return list(read_replay([json.dumps(line).encode() for line in lines], received_at=NOW))


@pytest.mark.parametrize(
    ("event", "action"),
    [
        ("issue_comment", "created"),
        ("issues", "labeled"),
        ("pull_request", "synchronize"),
        ("pull_request_review", "submitted"),
        ("check_suite", "completed"),
        ("push", None),
        ("star", "created"),
    ],
)
def test_same_fact_by_any_path_same_key(tmp_path: Path, event: str, action: str | None) -> None:
    payload = example(event, action)
    by_webhook = _webhook(event, payload)
    by_actions = _actions(tmp_path, event, payload)
    (by_replay,) = _replay({"event": event, "delivery": "other", "payload": payload})
    assert by_webhook.dedupe_key == by_actions.dedupe_key == by_replay.dedupe_key
    assert by_webhook.id == by_actions.id == by_replay.id
    assert (by_webhook.via, by_actions.via, by_replay.via) == ("webhook", "actions", "replay")


def test_schedule_becomes_timer_tick(tmp_path: Path) -> None:
    env = _actions(tmp_path, "schedule", {"schedule": "*/30 * * * *"})
    assert env.type == "timer.tick"
    assert env.source == "timer"
    assert env.payload == {"schedule": "*/30 * * * *"}
    assert env.subject.kind == "repository"
    assert env.scope.repo == "octo-org/octo-repo"
    assert env.dedupe_key == "timer:octo-org/octo-repo:schedule:*/30 * * * *:4242"
    assert env.at == NOW


def test_workflow_dispatch_inputs_preserved(tmp_path: Path) -> None:
    payload = example("workflow_dispatch")
    payload["inputs"] = {"issue": "42", "dry_run": "true"}
    env = _actions(tmp_path, "workflow_dispatch", payload)
    assert env.payload["inputs"] == {"issue": "42", "dry_run": "true"}
    assert env.dedupe_key.endswith(":4242")
    assert env.delivery is None


def test_githubs_published_signature_vector() -> None:
    body = b"Hello, World!"
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature_for(body, "It's a Secret to Everybody") == expected
    verify_signature(body, expected, ["It's a Secret to Everybody"])


def test_two_secrets_during_rotation() -> None:
    body = b"{}"
    for secret in ("old-secret", "new-secret"):
        verify_signature(body, signature_for(body, secret), ["old-secret", "new-secret"])


@pytest.mark.parametrize(
    ("signature", "secrets", "message"),
    [
        (None, [SECRET], "no X-Hub-Signature-256"),
        ("sha1=abc", [SECRET], "not a sha256= signature"),
        ("sha256=" + "0" * 64, [SECRET], "does not match"),
        ("sha256=" + "0" * 64, [], "no webhook secret configured"),
    ],
)
def test_bad_signatures_refused(signature: str | None, secrets: list[str], message: str) -> None:
    with pytest.raises(SignatureError, match=message):
        verify_signature(b"{}", signature, secrets)


def test_tampered_body_refused() -> None:
    payload = example("issue_comment", "created")
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": "issue_comment",
        "X-Hub-Signature-256": signature_for(body, SECRET),
    }
    with pytest.raises(SignatureError):
        from_webhook(headers, body + b" ", [SECRET], received_at=NOW)


def test_header_names_are_case_insensitive() -> None:
    body = json.dumps(example("star", "created")).encode()
    headers = {
        "x-github-event": "star",
        "X-GITHUB-DELIVERY": "abc",
        "x-hub-signature-256": signature_for(body, SECRET),
    }
    env = from_webhook(headers, body, [SECRET], received_at=NOW)
    assert env.delivery == "abc"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "invalid JSON at line 1"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (b"[1, 2]", "expected a JSON object"),
        (b" " * (25 * 1024 * 1024 + 1), "over the 25 MiB limit"),
    ],
)
def test_bad_bodies(body: bytes, message: str) -> None:
    headers = {"X-GitHub-Event": "star", "X-Hub-Signature-256": signature_for(body, SECRET)}
    with pytest.raises(InvalidInput, match=message):
        from_webhook(headers, body, [SECRET], received_at=NOW)


def test_replay_accepts_envelope_lines() -> None:
    payload = example("issues", "opened")
    (first,) = _replay({"event": "issues", "delivery": "d", "payload": payload})
    (again,) = _replay(json.loads(first.model_dump_json()))
    assert again == first


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([b"{nope"], "replay line 1: invalid JSON"),
        ([b"", b"[1]"], "replay line 2: expected a JSON object"),
        ([b'{"event": "issues"}'], 'replay line 1: expected {"event": NAME'),
        (
            [b'{"event": "issues", "payload": {"action": "opened"}}'],
            "replay line 1: event issues disagrees",
        ),
        ([b'{"dedupe_key": "x"}'], "replay line 1: id: Field required"),
    ],
)
def test_replay_errors_name_the_line(lines: list[bytes], message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        list(read_replay(lines, received_at=NOW))
    assert message in str(info.value)


def test_actions_outside_a_run() -> None:
    with pytest.raises(InvalidInput, match="not inside a GitHub Actions run"):
        from_actions({}, received_at=NOW)
