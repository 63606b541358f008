"""The hand-written event shapes in holon/gateway/github.py against GitHub's webhook schema, and
every routed event's examples refused under every other routed event's name."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from holon.gateway.github import _SHAPES, PayloadError, check_shape, normalize
from tests.gateway.conftest import examples, schema

COMMON = {"action", "repository", "sender", "installation", "organization", "enterprise"}


def _variants(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas of one event, its per-action `oneOf`s flattened."""
    definitions = schema()["definitions"]
    if "$ref" in node:
        return _variants(definitions[node["$ref"].rsplit("/", 1)[-1]])
    if "oneOf" in node and "properties" not in node:
        return [v for child in node["oneOf"] for v in _variants(child)]
    return [node]


@pytest.mark.parametrize("event", sorted(_SHAPES))
def test_shape_table_follows_the_schema(event: str) -> None:
    variants = _variants(schema()["definitions"][f"{event}_event"])
    required = set.intersection(*(set(v.get("required", [])) for v in variants))
    keys = set.union(*(set(v.get("properties", {})) for v in variants)) - COMMON
    objects, table_keys = _SHAPES[event]
    assert set(objects) <= required, "a required object the schema does not require"
    assert table_keys == keys


PAIRS = [
    (named, actual)
    for named in sorted(_SHAPES)
    for actual in sorted(_SHAPES)
    if named != actual and actual in examples()
]


@pytest.mark.parametrize(("named", "actual"), PAIRS, ids=[f"{n}-on-{a}" for n, a in PAIRS])
def test_every_other_events_payload_disagrees(named: str, actual: str) -> None:
    for payload in examples()[actual]:
        with pytest.raises(PayloadError, match=f"event {named} disagrees with its payload"):
            check_shape(named, payload)


@pytest.mark.parametrize("event", sorted(e for e in _SHAPES if e in examples()))
def test_own_examples_agree(event: str) -> None:
    for payload in examples()[event]:
        check_shape(event, payload)
        normalize(event, payload, via="webhook", received_at=datetime.now(UTC))
