"""holon/gateway/restored.py: an envelope read back from stored state is made again from its
payload, so what it claims about its actor and command counts for nothing; a genuine one comes
back unchanged (every GitHub example)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from holon.gateway.commands import Command, parse_command
from holon.gateway.envelope import Actor, EventEnvelope
from holon.gateway.github import PayloadError, normalize
from holon.gateway.restored import rederive
from tests.gateway.conftest import example, examples

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
OWNER = Actor(login="Codertocat", type="User", is_bot=False, authority="owner")


def _command(text: str) -> Command:
    command = parse_command(text)
    assert command is not None
    return command


def _norm(event: str, payload: dict[str, Any], **kw: Any) -> EventEnvelope:
    return normalize(event, payload, via="webhook", received_at=NOW, **kw)


def test_every_genuine_example_comes_back_unchanged() -> None:
    count = 0
    for event, payloads in examples().items():
        for payload in payloads:
            env = _norm(event, payload, delivery="d-1")
            assert rederive(env) == env, f"{event}.{payload.get('action')}"
            count += 1
    assert count > 300


def _strangers_solve() -> EventEnvelope:
    payload = example("issue_comment", "created")
    payload["comment"].update(body="/holon solve", author_association="NONE")
    payload["sender"]["login"] = payload["comment"]["user"]["login"] = "drive-by"
    return _norm("issue_comment", payload)


def test_a_stored_claim_of_owner_authority_is_replaced_by_the_payloads() -> None:
    env = _strangers_solve()
    assert env.actor is not None
    assert env.actor.authority == "none"
    forged = env.model_copy(
        update={
            "actor": env.actor.model_copy(update={"authority": "owner", "association": "OWNER"})
        }
    )
    again = rederive(forged)
    assert again.actor is not None
    assert (again.actor.login, again.actor.authority) == ("drive-by", "none")
    assert again == env


def test_a_stored_command_or_actor_the_payload_does_not_hold_is_dropped() -> None:
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = "Thanks!"
    env = _norm("issue_comment", payload)
    assert env.command is None
    forged = env.model_copy(update={"command": _command("/holon solve"), "actor": OWNER})
    again = rederive(forged)
    assert again.command is None
    assert again.actor == env.actor


def test_holons_own_events_keep_no_actor_or_command() -> None:
    from holon.serve.serve import tick_envelope

    tick = tick_envelope(NOW, "Codertocat/Hello-World")
    assert rederive(tick) == tick
    forged = tick.model_copy(update={"actor": OWNER, "command": _command("/holon stop")})
    assert rederive(forged) == tick


def test_the_identity_the_state_knows_it_by_is_kept() -> None:
    env = _strangers_solve()
    moved = env.model_copy(update={"id": "evt_kept", "dedupe_key": "key-kept"})
    again = rederive(moved)
    assert (again.id, again.dedupe_key) == ("evt_kept", "key-kept")


@pytest.mark.parametrize(
    "type_", ["github.check_suite.completed", "github.no such event", "github."]
)
def test_a_payload_that_does_not_read_as_its_event_is_refused(type_: str) -> None:
    forged = _strangers_solve().model_copy(update={"type": type_})
    with pytest.raises(PayloadError):
        rederive(forged)
