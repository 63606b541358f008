"""Property: GitHub's real example payloads with values mutated (types swapped, nulls, huge and
negative numbers, lone surrogates, deep nesting, wrong-typed nested objects, timestamps out of
range) either normalize to a valid envelope or are refused with one InvalidInput line (exit 64);
nothing else, ever. Bounded to a few seconds."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.gateway.payload import decode_payload
from tests.gateway.conftest import examples

HUGE = "__HUGE_INT__"  # replaced in the JSON text: json.dumps cannot write such an int itself
ROUTED = [
    "issues",
    "issue_comment",
    "pull_request",
    "pull_request_review",
    "pull_request_review_comment",
    "check_suite",
    "check_run",
    "workflow_run",
    "push",
]
SAMPLES = [(name, payload) for name in ROUTED for payload in examples().get(name, [])[:3]]


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


REPLACEMENTS = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            0,
            -1,
            2**63,
            -(2**70),
            1.5,
            float("nan"),
            float("inf"),
            "",
            "\ud800",
            "a\udfffb",
            "\x00",
            "@holon solve \ud83d",
            HUGE,
            10**20,
            -(10**20),
            "9999-12-31T23:59:59-12:00",
            "0001-01-01T00:00:00+14:00",
            "2026-13-45T99:99:99Z",
            [],
            {},
            ["x"],
            {"id": "x"},
            {"login": None, "type": 5},
        ]
    ),
    st.integers(min_value=50, max_value=400).map(_deep),
    st.text(max_size=20),
    st.integers(),
)


def _mutate(data: st.DataObject, payload: dict[str, Any]) -> None:
    """Replace one value somewhere in `payload` (or a key's value at the top) in place."""
    node: Any = payload
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, dict | list) and child and data.draw(st.booleans()):
            node = child
            continue
        node[key] = copy.deepcopy(data.draw(REPLACEMENTS))  # never share a drawn list
        return


def _text(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).replace(f'"{HUGE}"', "9" * 5000).encode()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_payloads_normalize_or_are_one_line_bad_input(data: st.DataObject) -> None:
    name, original = data.draw(st.sampled_from(SAMPLES))
    payload = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        _mutate(data, payload)
    event = data.draw(st.sampled_from([name, name, *ROUTED]))
    try:
        envelope = normalize(
            event,
            decode_payload(_text(payload)),
            via="webhook",
            received_at=datetime(2026, 11, 21, tzinfo=UTC),
            delivery="d1",
        )
    except InvalidInput as exc:
        refusal = str(exc)
    else:
        # Accepted: the envelope must be valid, serializable and come back as itself.
        text = envelope.model_dump_json()
        text.encode("utf-8")
        assert EventEnvelope.model_validate_json(text) == envelope
        return
    assert "\n" not in refusal
    refusal.encode("utf-8")
