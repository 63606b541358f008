"""The event's journal line made from the envelope's values (`event_line`) is byte for byte the
line the journal's own encoding of `event_entry` writes, for every GitHub webhook example."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from holon.controller.journals import Journals, event_entry, event_line, journal_event
from holon.gateway.envelope import Actor, EventEnvelope, Scope, Subject
from holon.gateway.replay import read_line
from holon.serve.serve import tick_envelope
from holon.state.journal import Journal

EXAMPLES = Path(__file__).parents[1] / "fixtures/octokit-webhooks/examples.json"
AT = datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=UTC)


def _deliveries() -> list[tuple[str, bytes]]:
    found = []
    for group in json.loads(EXAMPLES.read_text()):
        for number, payload in enumerate(group["examples"]):
            line = {"event": group["name"], "delivery": f"d-{number}", "payload": payload}
            found.append((f"{group['name']}-{number}", json.dumps(line).encode()))
    return found


def _old_line(tmp_path: Path, env: EventEnvelope, text: str | None) -> bytes:
    """What `journal_event` wrote before: the entry encoded by the journal itself."""
    path = tmp_path / "old.ndjson"
    path.unlink(missing_ok=True)
    with Journal(path) as journal:
        if text is None:
            journal.append(event_entry(env, AT))
        else:
            journal.append_verbatim(event_entry(env, AT), ("envelope", "payload"), text)
    return path.read_bytes()


def test_every_webhook_example_journals_the_same_line(tmp_path: Path) -> None:
    seen = 0
    for where, raw in _deliveries():
        env, text = read_line(raw, where, received_at=AT, mention="holon")
        if env is None:
            continue
        assert text is not None, where  # read as a delivery: its payload's text is known
        for payload_text in (text, None):
            line = event_line(env, AT, payload_text)
            assert line == _old_line(tmp_path, env, payload_text), where
        seen += 1
    assert seen > 200  # the fixture's examples, not a handful


def _envelope(**changes: Any) -> EventEnvelope:
    values: dict[str, Any] = {
        "id": "evt_1",
        "source": "github",
        "type": "github.issue_comment.created",
        "via": "webhook",
        "scope": Scope(repo="o/r", session="s\u00e9"),
        "at": datetime(2026, 1, 1, 1, 2, 3, 120000, tzinfo=timezone(timedelta(hours=2))),
        "subject": Subject(kind="pull_request", id="7", head_sha="ab", pull_requests=[7, 9]),
        "dedupe_key": 'k\u2028"quoted"\\',
        "delivery": None,
        "actor": Actor(login="\ud800lone", type="User", is_bot=True, authority="none"),
        "payload": {"z": [1.5, None, True], "a": "\ud83d\ude00 \udfff", "m": {"b": 1, "a": 2}},
    }
    return EventEnvelope(**{**values, **changes})


@pytest.mark.parametrize(
    "env",
    [
        _envelope(),
        _envelope(subject=None, actor=None, scope=Scope()),
        tick_envelope(AT, "o/r"),
        tick_envelope(AT, None),
    ],
)
def test_odd_values_journal_the_same_line(tmp_path: Path, env: EventEnvelope) -> None:
    # Offsets, microseconds, escapes, non-ASCII and lone surrogates (scrubbed as before).
    assert event_line(env, AT, None) == _old_line(tmp_path, env, None)
    text = json.dumps(env.payload)  # as read: a lone surrogate only ever escaped
    assert event_line(env, AT, text) == _old_line(tmp_path, env, text)


def test_a_line_it_cannot_make_is_encoded_the_old_way(tmp_path: Path) -> None:
    env = _envelope(payload={"x": float("nan")})
    assert event_line(env, AT, None) is None
    journals = Journals(*(Journal(tmp_path / f"{n}.ndjson") for n in ("e", "d", "a")))
    with pytest.raises(ValueError, match="JSON compliant"):
        journal_event(journals, env, AT)  # refused as the journal refuses it
    journals.close()
