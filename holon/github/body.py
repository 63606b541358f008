"""A body as Holon writes it to GitHub: its own marker first, no other marker anywhere, and
within GitHub's length limit without breaking its Markdown.

Bodies are rendered by Holon (templates escape outside text with `holon.markdown`), but a body
reaches an effect as one string, so the effect makes sure of the marker itself: a marker line
the renderer put first is replaced by the effect's own, and every other `<!--` is broken with a
zero-width space (as `markdown.block` does inside code), so no text in the body can be read as a
second marker, which would make `parse_marker` find none and the comment be posted again.
Then what no body Holon posts may do is taken away (`neutralize.neutralized`: `/holon` command
lines, @mentions, links outside the allow-list), whoever wrote the text.

A body over the limit is cut at a line (or, for one huge line, mid-line), every code fence and
`<details>` still open at the cut is closed, and a note says how much was left out.
"""

from __future__ import annotations

import re

from holon.github.marker import parse_marker
from holon.github.neutralize import DEFAULT_RULES, OutputRules, neutralized

COMMENT_LIMIT = 65536  # GitHub's limit on an issue comment's body
SUMMARY_LIMIT = 65535  # and on a check run's output summary
_ZWSP = "\u200b"
_COMMENT_OPEN = re.compile("<!--")
# A fence line: its container prefix (indentation, `>`, a list marker), then 3+ ` or ~.
# Each container marker consumes a character, so the prefix is matched in linear time.
_FENCE = re.compile(
    r"(?P<prefix>(?:[ \t]*(?:>|[-+*][ \t]|\d{1,9}[.)][ \t]))*[ \t]*)(?P<run>`{3,}|~{3,})"
)
_DETAILS_OPEN = re.compile(r"<details\b", re.I)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.I)
ROOM = 400  # for the closing fences, tags and the note
MAX_DETAILS = 8  # `</details>` closed at a cut, at most (GitHub closes any left)


def size(text: str) -> int:
    """`text`'s length as GitHub may count it: in UTF-16 code units, never less than in code
    points, so a body of emoji is not measured short."""
    return len(text.encode("utf-16-le")) // 2


def neutralize(text: str) -> str:
    """`text` with every HTML comment opener broken, so no marker can be read in it."""
    return _COMMENT_OPEN.sub("<" + _ZWSP + "!--", text)


def _without_leading_marker(body: str) -> str:
    first, newline, rest = body.partition("\n")
    line = first.strip()
    # Only a line that is a marker and nothing else is the renderer's marker line.
    if line.startswith("<!-- holon:") and line.endswith("-->") and parse_marker(line):
        return rest if newline else ""
    return body


def _open_blocks(text: str) -> list[str]:
    """The lines that close what is open at the end of `text`: a code fence, `<details>`."""
    fence: tuple[str, str] | None = None  # (closing line, fence run)
    details = 0
    for row in text.split("\n"):
        found = _FENCE.match(row)
        if fence is not None:
            run = found["run"] if found else ""
            closes = run[:1] == fence[1][:1] and len(run) >= len(fence[1])
            if found and closes and not row[found.end() :].strip():
                fence = None
            continue
        if found and not (found["run"][0] == "`" and "`" in row[found.end() :]):
            # The closing fence keeps the container (`>`) and the indentation of the opening.
            prefix = re.sub(r"[^>]", " ", found["prefix"])
            fence = (prefix + found["run"], found["run"])
            continue
        details += len(_DETAILS_OPEN.findall(row)) - len(_DETAILS_CLOSE.findall(row))
    closing = [fence[0]] if fence else []
    return closing + ["</details>"] * min(max(details, 0), MAX_DETAILS)


def _cut(text: str, budget: int) -> str:
    """The longest start of `text` within `budget` (UTF-16 units), at a line end if it can."""
    low, high = 0, len(text)
    while low < high:  # the most code points whose size fits
        middle = (low + high + 1) // 2
        if size(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    kept = text[:low]
    at_line = kept.rfind("\n")
    return kept[:at_line] if at_line > len(kept) // 2 else kept


def fit(body: str, limit: int, stated: int | None = None) -> str:
    """`body` within `limit`, cut safely with a note (naming the `stated` limit, `limit` by
    default) when it is longer."""
    if size(body) <= limit:
        return body
    budget = limit - ROOM
    while True:
        kept = _cut(body, budget)
        left_out = len(body) - len(kept)
        note = (
            f"_Holon cut this text to GitHub's limit of {stated or limit:,} characters: "
            f"the last {left_out:,} characters are left out._"
        )
        closing = "\n".join(_open_blocks(kept))
        text = kept.rstrip("\n") + "\n" + (closing + "\n" if closing else "") + "\n" + note + "\n"
        if size(text) <= limit or budget <= 0:
            return text
        # What closes the open blocks took more room than kept for it (a deep quote).
        budget -= size(text) - limit


def with_marker(
    marker: str, body: str, limit: int = COMMENT_LIMIT, rules: OutputRules = DEFAULT_RULES
) -> str:
    """`body` as written to GitHub: `marker` as its first line, no other marker, nothing
    `rules` forbid, and within `limit` with the marker counted."""
    rest = neutralized(neutralize(_without_leading_marker(body)), rules)
    return marker + "\n" + fit(rest, limit - size(marker) - 1, limit)
