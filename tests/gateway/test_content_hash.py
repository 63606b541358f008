"""content_hash keys every generic event in deployed dedupe stores: a faster way to compute it
must give the same digest for every payload, or a redelivery across an upgrade is handled twice.
The digests below were computed by the original `json.dumps(...)` implementation."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from holon.gateway.github import content_hash
from tests.gateway.conftest import examples

# The content_hash of every example in examples.json, in file order, joined by newlines.
ALL_EXAMPLES_DIGEST = "944a88963a77712800f94c65f22db0753a158b88d8a049373add1dadface9de1"
ODD = {
    "é": "ünïcode \u2028 \U0001f600",
    "b": [1.5, -0.0, 1e300, 10**30, True, None, '\n\t"\\\x01'],
    "a": {"z": 1, "A": 2, "_": {}},
}


def _original(payload: dict[str, Any]) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def test_every_example_hashes_as_the_original_function() -> None:
    payloads = [payload for entries in examples().values() for payload in entries]
    assert len(payloads) == 329
    hashes = [content_hash(payload) for payload in payloads]
    assert hashes == [_original(payload) for payload in payloads]
    assert hashlib.sha256("\n".join(hashes).encode()).hexdigest() == ALL_EXAMPLES_DIGEST


def test_odd_values_hash_as_the_original_function() -> None:
    assert content_hash(ODD) == _original(ODD) == "7d3c70b2cc36cfc4ccc5ea64758c25f5"


def test_key_order_does_not_change_the_hash() -> None:
    assert content_hash({"b": 1, "a": {"y": 2, "x": 3}}) == content_hash(
        {"a": {"x": 3, "y": 2}, "b": 1}
    )
