from __future__ import annotations

import re

import pytest

from holon.duration import MAX_SECONDS, format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5m", 300),
        ("1h30m", 5400),
        ("250ms", 0.25),
        ("2", 2),
        (3, 3),
        (1.5, 1.5),
        ("1d", 86400),
        ("1.5h", 5400),
    ],
)
def test_parse(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5 m", "m5", "1h30", "-5s", "0", "0s", True])
def test_reject(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_format() -> None:
    assert format_duration(12.5) == "12.5s"
    assert format_duration(5400) == "5400s"
    assert parse_duration(format_duration(0.25)) == 0.25


def test_zero_only_when_allowed() -> None:
    assert parse_duration("0s", allow_zero=True) == 0.0
    assert parse_duration("0.000s", allow_zero=True) == 0.0
    with pytest.raises(ValueError, match="greater than zero"):
        parse_duration("0s")
    with pytest.raises(ValueError, match="duration"):
        parse_duration("-1s", allow_zero=True)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (float("nan"), "not a finite number"),
        (float("inf"), "not a finite number"),
        (10**400, "(a number too large): at most 365d"),
        ("9" * 400 + "s", "at most 365d"),
        ("366d", "at most 365d"),
        (365 * 86400 + 1, "at most 365d"),
    ],
)
def test_limits_are_finite_and_at_most_a_year(value: str | float, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_duration(value)


def test_measured_durations_may_be_longer_but_finite() -> None:
    assert parse_duration("400d", allow_zero=True, maximum=None) == 400 * 86400
    with pytest.raises(ValueError, match="out of range"):
        parse_duration("9" * 400 + "s", allow_zero=True, maximum=None)
    assert parse_duration("365d") == MAX_SECONDS
