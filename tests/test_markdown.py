"""`markdown.inline`: the same escape for short text (kept once escaped) and long text."""

from __future__ import annotations

import pytest

from holon import markdown


@pytest.mark.parametrize("size", [1, 255, 256, 257, 5000])
def test_inline_escapes_alike_whatever_the_length(size: int) -> None:
    unit = "@a_<!--*\u202e"
    text = (unit * size)[:size]
    expected = markdown._inline(text)
    assert "\u202e" not in expected
    assert "<!--" not in expected
    assert markdown.inline(text) == expected
    assert markdown.inline(text) == expected  # the second call (a kept escape) too


def test_a_trusted_value_of_the_same_text_is_escaped_as_plain_text() -> None:
    assert markdown.inline(markdown.Trusted("a_b")) == markdown.inline("a_b") == "a\\_b"
