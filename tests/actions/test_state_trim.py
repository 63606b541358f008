"""A bundle's trimmed payloads still say everything a decision reads: over every GitHub webhook
example, the envelope the connector makes again of a trimmed payload (as recovery and resume
do) is the one it made of the whole payload, and the payload context reader reads the same
subject, trigger and item; scrubbing masks token-shaped strings and keeps Holon's ids."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from holon.actions.trim import scrub, trim_entry, trim_payload
from holon.controller.journals import event_entry
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import PayloadError, normalize
from holon.gateway.restored import rederive
from holon.github.context_payload import PayloadReader, subject_of, trigger_of
from holon.github.context_source import PartMissing
from tests.gateway.conftest import examples

AT = datetime(2026, 1, 1, tzinfo=UTC)
CASES = [
    (name, index, payload)
    for name, payloads in examples().items()
    for index, payload in enumerate(payloads)
]


def _envelope(event: str, payload: dict[str, Any]) -> EventEnvelope | None:
    try:
        return normalize(event, json.loads(json.dumps(payload)), via="actions", received_at=AT)
    except PayloadError:
        return None


def _item(event: str, payload: dict[str, Any]) -> Any:
    subject = subject_of(event, payload)
    if subject is None:
        return None
    try:
        return PayloadReader(event, payload).item(subject.kind, subject.number)
    except PartMissing as exc:
        return str(exc)


IDS = [f"{event}-{index}" for event, index, _ in CASES]


@pytest.mark.parametrize(("event", "index", "payload"), CASES, ids=IDS)
def test_a_trimmed_payload_reads_as_the_whole_one(
    event: str, index: int, payload: dict[str, Any]
) -> None:
    whole = _envelope(event, payload)
    if whole is None:
        return  # the connector refuses this example whole: nothing of it is ever journaled
    trimmed = trim_payload(whole.payload)
    assert len(json.dumps(trimmed)) <= len(json.dumps(whole.payload))
    kept = whole.model_copy(update={"payload": trimmed})
    again = rederive(kept, mention="holon")
    assert again.model_dump(exclude={"payload"}) == rederive(whole).model_dump(exclude={"payload"})
    assert subject_of(event, trimmed) == subject_of(event, whole.payload)
    assert trigger_of(event, trimmed) == trigger_of(event, whole.payload)
    assert _item(event, trimmed) == _item(event, whole.payload)
    # What the policy's rules read of a payload.
    for key in ("label", "review", "check_run", "check_suite"):
        if isinstance(whole.payload.get(key), dict):
            for field in ("name", "state", "conclusion", "app"):
                original = whole.payload[key].get(field)
                if field == "app" and isinstance(original, dict):
                    assert trimmed[key][field].get("slug") == original.get("slug")
                else:
                    assert trimmed[key].get(field) == original
    scalars = {k: v for k, v in whole.payload.items() if not isinstance(v, dict | list)}
    assert {k: trimmed[k] for k in scalars if k in trimmed} == {
        k: v for k, v in scalars.items() if not k.endswith("_url")
    }


def test_trimming_drops_api_urls_and_reduces_accounts_and_repositories() -> None:
    payload = examples()["issue_comment"][0]
    trimmed = trim_payload(payload)
    text = json.dumps(trimmed)
    assert "api.github.com" not in text
    assert "node_id" not in text
    assert trimmed["sender"] == {k: payload["sender"][k] for k in ("login", "id", "type")}
    assert set(trimmed["repository"]) <= {
        "id", "name", "full_name", "owner", "private", "fork", "default_branch", "pushed_at",
        "html_url",
    }  # fmt: skip
    assert trimmed["comment"]["body"] == payload["comment"]["body"]
    assert len(text) < len(json.dumps(payload)) / 2


def test_an_issue_comment_on_a_pull_request_still_reads_as_one() -> None:
    payload = examples()["issue_comment"][0]
    payload = {**payload, "issue": {**payload["issue"], "pull_request": {"url": "x"}}}
    trimmed = trim_payload(payload)
    assert trimmed["issue"]["pull_request"] == {"url": "x"}  # URLs only: kept whole


TOKEN = "ghp_" + "A1b2C3d4" * 5


def test_scrub_masks_token_shaped_strings_and_keeps_ids() -> None:
    value = {
        "id": "dec:evt_1",
        "rationale": f"asked with {TOKEN}",
        "nested": [{"body": f"Bearer {TOKEN}"}, 3, None],
        "url": "https://user:hunter2@example.com/x",
    }
    scrubbed = scrub(value)
    assert TOKEN not in json.dumps(scrubbed)
    assert "hunter2" not in json.dumps(scrubbed)
    assert scrubbed["id"] == "dec:evt_1"
    assert scrubbed["nested"][1:] == [3, None]


def test_an_event_entry_is_trimmed_and_scrubbed_and_holons_own_kept_whole() -> None:
    payload = examples()["issue_comment"][0]
    payload = {**payload, "comment": {**payload["comment"], "body": f"/holon solve {TOKEN}"}}
    env = normalize("issue_comment", payload, via="actions", received_at=AT)
    kept = trim_entry(event_entry(env, AT))
    assert TOKEN not in json.dumps(kept)
    assert kept["envelope"]["payload"]["sender"] == trim_payload(payload)["sender"]
    assert EventEnvelope.model_validate(kept["envelope"]).id == env.id
    internal = {"id": "e", "envelope": {"source": "holon", "via": "internal",
                                        "payload": {"run_url": "u", "x_url": "v"}}}  # fmt: skip
    assert trim_entry(internal) == internal
