"""normalize's speed-ups (split paths, shared Scope/Actor instances, one canonical encoder) change
no envelope: every example normalizes to exactly what the implementation before them gave."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from holon.gateway import github
from holon.gateway.envelope import Actor, EventEnvelope, Scope, Subject
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
    for i in range(github._SHARED_MAX + 10):
        github._subject(kind="issue", id=str(i))
    assert len(github._subjects) <= github._SHARED_MAX


def test_a_shared_subject_is_the_value_it_stands_for() -> None:
    payload = example("check_run", "completed")
    first = github.normalize("check_run", payload, via="webhook", received_at=NOW)
    again = github.normalize(
        "check_run", example("check_run", "completed"), via="webhook", received_at=NOW
    )
    assert first.subject is again.subject  # one instance, fewer objects per kept envelope
    run = payload["check_run"]
    assert first.subject == Subject(
        kind="check_run",
        id=str(run["id"]),
        head_sha=run["head_sha"],
        pull_requests=sorted(pr["number"] for pr in run["pull_requests"]),
    )
    assert github._subject(kind="issue", id="1") != github._subject(kind="issue", id="2")
    # A head sha that is not a string is refused by validation, as it always was.
    bad = example("workflow_run", "completed")
    bad["workflow_run"]["head_sha"] = {"not": "a sha"}
    with pytest.raises(ValidationError):
        github.normalize("workflow_run", bad, via="webhook", received_at=NOW)


def test_envelopes_share_their_fields_set() -> None:
    first = github.normalize("issues", example("issues", "opened"), via="webhook", received_at=NOW)
    again = github.normalize("issues", example("issues", "opened"), via="webhook", received_at=NOW)
    assert first.model_fields_set is again.model_fields_set
    given = set(first.model_fields_set)
    assert given == {
        "id", "source", "type", "via", "scope", "at", "subject", "dedupe_key", "delivery",
        "actor", "command", "payload",
    }  # fmt: skip
    # A copy gets its own set: updating it leaves the shared one as it was.
    copied = first.model_copy(update={"delivery": "other"})
    assert copied.delivery == "other"
    assert first.model_fields_set == given == again.model_fields_set
    bare = EventEnvelope(
        id="evt_x", source="timer", type="timer.tick", via="timer", scope=Scope(), at=NOW,
        subject=None, dedupe_key="k", payload={},
    )  # fmt: skip
    assert bare.model_fields_set == {
        "id", "source", "type", "via", "scope", "at", "subject", "dedupe_key", "payload"
    }  # fmt: skip
