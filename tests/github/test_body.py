"""A body as Holon writes it: its marker first, no other marker, within GitHub's limit, and cut
without breaking a code fence."""

from __future__ import annotations

import re
import time

import pytest

from holon import markdown
from holon.github.body import COMMENT_LIMIT, fit, neutralize, size, with_marker
from holon.github.marker import format_marker, parse_marker

MARK = format_marker("issue", "1", "holon", None)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)


def _fences_balanced(text: str) -> bool:
    """Every fence opened is closed (CommonMark, top level, as Holon's templates write them)."""
    open_run = None
    for match in _FENCE.finditer(text):
        run = match.group(1)
        if open_run is None:
            open_run = run
        elif run[0] == open_run[0] and len(run) >= len(open_run):
            open_run = None
    return open_run is None


def test_a_short_body_is_kept_as_it_is() -> None:
    assert with_marker(MARK, "hello\n\nworld") == MARK + "\nhello\n\nworld"


def test_other_markers_are_broken_so_exactly_one_is_read() -> None:
    forged = format_marker("issue", "1", "holon", "github-review")
    body = f"text {forged}\n```\n{forged}\n```\n<!--hidden-->"
    written = with_marker(MARK, body)
    assert parse_marker(written) == parse_marker(MARK)
    assert written.count("<!--") == 1
    assert "<\u200b!--hidden-->" in written


def test_a_marker_that_is_not_first_is_not_taken_for_the_bodys_own() -> None:
    body = "intro\n" + format_marker("issue", "2", "holon", None)
    assert with_marker(MARK, body).splitlines()[1] == "intro"
    assert parse_marker(with_marker(MARK, body)) == parse_marker(MARK)


@pytest.mark.parametrize(
    ("body", "closing"),
    [
        ("intro\n```text\n" + "x\n" * 40_000, "```"),
        ("intro\n````\n```\n" + "y\n" * 40_000, "````"),
        ("intro\n~~~\n" + "z\n" * 40_000, "~~~"),
        ("> quoted\n> ```\n" + "> q\n" * 20_000, "> ```"),
        ("- item\n  ```\n" + "  w\n" * 30_000, "  ```"),
        ("<details><summary>Details</summary>\n\n```text\n" + "d\n" * 40_000, "```"),
    ],
)
def test_a_long_body_is_cut_with_its_fence_closed_and_a_note(body: str, closing: str) -> None:
    written = with_marker(MARK, body)
    assert size(written) <= COMMENT_LIMIT
    lines = written.splitlines()
    assert closing in lines
    assert lines[-1].startswith("_Holon cut this text to GitHub's limit of 65,536 characters")
    assert written.startswith(MARK + "\nintro") or written.startswith(MARK + "\n")
    if closing.startswith("`") or closing.startswith("~"):
        assert _fences_balanced(written)


def test_an_open_details_is_closed_at_a_cut() -> None:
    body = "<details><summary>Log</summary>\n\n" + "line\n" * 40_000
    assert "</details>" in with_marker(MARK, body).splitlines()


def test_a_closed_fence_is_not_closed_again() -> None:
    body = "```\nshort\n```\n" + "after\n" * 40_000
    written = fit(body, 1000)
    assert _fences_balanced(written)
    assert written.count("```") == 2


def test_one_huge_line_is_cut_mid_line() -> None:
    written = with_marker(MARK, "a" * 1_000_000)
    assert size(written) <= COMMENT_LIMIT
    assert written.endswith("characters are left out._\n")


def test_wide_characters_are_measured_as_github_may() -> None:
    written = with_marker(MARK, "\U0001f600" * 40_000)  # 80,000 UTF-16 units
    assert size(written) <= COMMENT_LIMIT
    assert len(written.encode("utf-16-le")) // 2 <= COMMENT_LIMIT


def test_an_escaped_block_stays_a_block_when_cut() -> None:
    log = "x" * 10 + "\n```\nbreakout\n" * 10_000
    written = with_marker(MARK, "Log:\n" + markdown.block(log))
    assert _fences_balanced(written)
    assert size(written) <= COMMENT_LIMIT


@pytest.mark.parametrize(
    "line", [" " * 200_000 + "x", "- " * 100_000 + "x", "> " * 100_000, "\t" * 200_000 + "`"]
)
def test_hostile_lines_are_scanned_in_linear_time(line: str) -> None:
    start = time.monotonic()
    fit(line + "\n" + "y\n" * 40_000, COMMENT_LIMIT)
    assert time.monotonic() - start < 2


def test_neutralize_breaks_every_comment_opener() -> None:
    assert "<!--" not in neutralize("<!-- a --> <!--b")


def test_only_a_line_that_is_a_marker_alone_is_the_bodys_marker_line() -> None:
    other = format_marker("issue", "2", "holon", None)
    written = with_marker(MARK, other + " and text")
    assert written.splitlines()[1] == "<\u200b" + other[1:] + " and text"
