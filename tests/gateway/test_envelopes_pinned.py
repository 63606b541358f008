"""normalize's speed-ups (split paths, shared Scope/Actor instances, one canonical encoder) change
no envelope: every example normalizes to exactly what the implementation before them gave."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

from holon.gateway import github
from holon.gateway.envelope import Actor, Scope
from tests.gateway.conftest import example, examples

# sha256 of model_dump_json() of every example's envelope, one per line in file order, as the
# implementation before the speed-ups gave it (received at NOW, delivery d<index in its event>).
ALL_ENVELOPES_DIGEST = "4aeeddb28ce9a07f0fe90677b2417c7a3092254f8897e60df26f59891f72b862"
NOW = datetime(2026, 11, 21, tzinfo=UTC)


def test_every_example_normalizes_as_before() -> None:
    digest = hashlib.sha256()
    count = 0
    for event, payloads in examples().items():
        for i, payload in enumerate(payloads):
            env = github.normalize(
                event,
                json.loads(json.dumps(payload)),
                via="webhook",
                received_at=NOW,
                delivery=f"d{i}",
            )
            digest.update(env.model_dump_json().encode() + b"\n")
            count += 1
    assert count == 329
    assert digest.hexdigest() == ALL_ENVELOPES_DIGEST


def test_shared_scope_and_actor_are_the_values_they_stand_for() -> None:
    payload = example("issues", "opened")
    other = example("issues", "opened")
    other["repository"]["full_name"] = "someone/else"
    other["sender"]["login"] = "someone"
    first = github.normalize("issues", payload, via="webhook", received_at=NOW)
    second = github.normalize("issues", other, via="webhook", received_at=NOW)
    assert first.scope == Scope(repo=payload["repository"]["full_name"])
    assert second.scope == Scope(repo="someone/else")
    assert second.actor is not None
    assert first.actor is not None
    assert second.actor.login == "someone"
    assert second.actor.association is None
    assert first.actor == Actor(
        login=payload["sender"]["login"],
        type=payload["sender"]["type"],
        association=payload["issue"]["author_association"],
        is_bot=False,
        authority=github.authority_of(payload["issue"]["author_association"]),
    )


def test_the_shared_instances_are_bounded() -> None:
    for i in range(github._SHARED_MAX + 10):
        github._scope(f"o/r{i}")
    assert len(github._scopes) <= github._SHARED_MAX
