"""Control commands: encoding, parsing and inbox names (the store tests cover the files)."""

from __future__ import annotations

import re

import pytest

from holon.errors import InvalidInput
from holon.state.control import control_name, encode_control, is_control_name, parse_control


def test_encode_then_parse_round_trips() -> None:
    command = {"command": "pause", "reason": "ünïcode", "by": "ops", "at": "2026-01-01T00:00:00Z"}
    text = encode_control(command)
    assert text.endswith("\n")
    assert parse_control(text.encode()) == command


@pytest.mark.parametrize(
    "command",
    [{}, {"command": ""}, {"command": None}, {"command": "x", "n": float("nan")}],
    ids=["missing", "empty", "null", "nan"],
)
def test_encode_refuses_bad_commands(command: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        encode_control(command)


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b'{"command": 1}', b'{"command": ""}', b"\xff"])
def test_parse_returns_none_for_malformed_files(raw: bytes) -> None:
    assert parse_control(raw) is None


def test_names_sort_in_posting_order_and_are_recognized() -> None:
    names = [control_name() for _ in range(200)]
    assert names == sorted(names)
    assert len(set(names)) == len(names)
    assert re.fullmatch(r"\d{8}T\d{6}\.\d{9}Z-[0-9a-f]{32}\.json", names[0])
    assert all(is_control_name(name) for name in names)
    assert not is_control_name(".x.json.abc.tmp")
    assert not is_control_name("rejected")
