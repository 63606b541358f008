"""content_hash keys every generic event in deployed dedupe stores: a faster way to compute it
must give the same digest for every payload, or a redelivery across an upgrade is handled twice.
The digests below were computed by the original `json.dumps(...)` implementation."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from holon.gateway import github
from holon.gateway.github import canonical_text, content_hash
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


# The canonical text is made from kept texts of repeated objects (repository, sender, users,
# nested repositories); whatever was kept before, it must be the text json.dumps gives.

_MARK = "\x00holon-entity-0\x00"


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    github.forget_kept_texts()
    yield
    github.forget_kept_texts()


def _text(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_every_example_hashes_the_same_from_kept_texts(fresh_cache: None) -> None:
    payloads = [payload for entries in examples().values() for payload in entries]
    first = [content_hash(payload) for payload in payloads]
    assert github._entity_texts  # the repeated objects were kept
    kept = dict(github._entity_texts)
    # Fresh copies (other objects, same content): found among the kept texts, none added.
    again = [content_hash(json.loads(json.dumps(payload))) for payload in payloads]
    assert first == again == [_original(payload) for payload in payloads]
    assert github._entity_texts == kept
    assert all(canonical_text(p) == _text(p) for p in payloads)


def test_equal_objects_of_other_types_are_other_texts(fresh_cache: None) -> None:
    # 1 == 1.0 == True in Python, but they are three JSON texts and three keys.
    base = {"action": "created", "sender": {"id": 7, "login": "octocat"}}
    for flag in (True, 1, 1.0, False, 0, 0.0, -0.0, None, "1"):
        payload = {**base, "repository": {"id": 1, "full_name": "o/r", "private": flag}}
        nested = {**base, "pull_request": {"head": {"repo": payload["repository"]}}}
        for p in (payload, nested):
            assert canonical_text(p) == _text(p)
            assert content_hash(p) == _original(p)
    digests = {
        content_hash({**base, "repository": {"id": 1, "full_name": "o/r", "private": flag}})
        for flag in (True, 1, 1.0)
    }
    assert len(digests) == 3


@pytest.mark.parametrize(
    "hostile",
    [
        _MARK,
        '"' + _MARK,
        "\x00holon-entity-1\x00",
        "\x00holon-entity-x\x00",
        "\x00holon-entity-",
        "\\u0000holon-entity-0\\u0000",
    ],
)
def test_a_payload_holding_a_mark_hashes_as_the_original(hostile: str, fresh_cache: None) -> None:
    repository = {"id": 1, "full_name": "o/r", "description": hostile}
    payloads = [
        {"action": hostile, "repository": repository},
        {
            "a": hostile,
            "repository": {"id": 1, "full_name": "o/r"},
            "sender": {"id": 2, hostile: 1},
        },
        {hostile: {"id": 3, "login": hostile}, "repository": repository, "z": [hostile]},
        {"issue": {"user": {"id": 4, "login": "x"}, "title": hostile}, "sender": repository},
    ]
    for payload in payloads:
        assert canonical_text(payload) == _text(payload)
        assert content_hash(payload) == _original(payload)


def test_kept_texts_are_bounded(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(github, "_ENTITY_BUDGET", 20_000)
    payloads = [payload for entries in examples().values() for payload in entries]
    for payload in payloads:
        assert content_hash(payload) == _original(payload)
        assert github._entity_bytes <= 20_000
        assert sum(len(k) + len(v) for k, v in github._entity_texts.items()) == (
            github._entity_bytes
        )
    big = {"repository": {"id": 1, "full_name": "o/r", "x": "y" * 70_000}}
    github.forget_kept_texts()
    assert content_hash(big) == _original(big)
    assert not github._entity_texts  # over _ENTITY_MAX: encoded each time, never kept


def test_objects_marshal_refuses_are_encoded_with_the_rest(fresh_cache: None) -> None:
    class Odd(dict[str, Any]):
        pass

    payload = {"repository": {"id": 1, "full_name": "o/r", "owner": Odd(login="x")}}
    assert canonical_text(payload) == _text(payload)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.sampled_from('ab"\\\x00é\u2028-0holn:ty{}[]'), max_size=12),
    st.sampled_from([_MARK, '"' + _MARK, "\x00holon-entity-", "holon-entity-0"]),
)
_keys = st.sampled_from(
    ["id", "login", "full_name", "repository", "sender", "head", "repo", "user", "a", _MARK]
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=6), st.booleans())
def test_any_payload_hashes_as_the_original(payload: dict[str, Any], twice: bool) -> None:
    if twice:
        content_hash(json.loads(json.dumps(payload)))
    assert canonical_text(payload) == _text(payload)
    assert content_hash(payload) == _original(payload)
