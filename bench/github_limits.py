"""The documented calls per effect the GitHub benchmark judges against, in one place.

`DOCUMENTED` holds the bold figures of each row of docs/github.md's "Calls per effect" table, in
the order the row gives them (tests/bench/test_github_limits.py reads the table and compares:
change both together). A figure may name `k` (files the patch reads) and `b` (new files that are
not UTF-8 text), which the benchmark sets for its own patch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

DOCUMENTED: dict[str, tuple[str, ...]] = {
    "comment, reply, progress, settle": ("3", "1", "3", "1"),
    "label, unlabel": ("2", "1"),
    "close an issue": ("2", "1"),
    "request reviews": ("2", "1"),
    "workflow dispatch, repository dispatch": ("1",),
    "start, settle a check run": ("2", "1", "3", "1"),
    "merge": ("6", "1"),
    "publish an issue run": ("10 + k + b", "5"),
    "publish a review": ("3", "2"),
    "facts: an actor's permission": ("1",),
    "facts: a pull request": ("2",),
    "facts: whether a pull request is Holon's": ("1",),
    "facts: a pull request's head": ("1",),
    "facts: checks on a sha": ("3", "4"),
}
RETRY_EXTRA = 1  # a write answered 5xx after GitHub did it: one look-up more, nothing resent
_TERM = re.compile(r"\s*(\d+|[a-z])\s*")


@dataclass(frozen=True)
class Limit:
    """Figure `index` of the docs row `row`."""

    row: str
    index: int = 0

    def calls(self, values: Mapping[str, int]) -> int:
        return figure(DOCUMENTED[self.row][self.index], values)

    def text(self) -> str:
        return DOCUMENTED[self.row][self.index]


def figure(text: str, values: Mapping[str, int]) -> int:
    """`8 + k + b` with `values` for the letters; a bare number as it is."""
    total = 0
    for term in text.split("+"):
        found = _TERM.fullmatch(term)
        if found is None:
            raise ValueError(f"not a documented figure: {text!r}")
        word = found.group(1)
        total += int(word) if word.isdigit() else values[word]
    return total


def docs_table(markdown: str) -> dict[str, tuple[str, ...]]:
    """The bold figures of each row of the "Calls per effect" table in `markdown`."""
    start = markdown.index("### Calls per effect")
    rows: dict[str, tuple[str, ...]] = {}
    for line in markdown[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("effect", "---"):
            continue
        rows[cells[0]] = tuple(re.findall(r"\*\*(.+?)\*\*", cells[1]))
    return rows
