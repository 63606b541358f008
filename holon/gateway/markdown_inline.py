"""Which lines of a paragraph start with ordinary text, not inside code, raw HTML or autolinks.

Inline code spans, raw HTML and autolinks may cross the line breaks of a paragraph, and whether
a backtick or `<` opens one depends on what follows, so a paragraph is judged as a whole. The
rules are cmark-gfm's (GitHub's renderer), scanned left to right as it does.
"""

from __future__ import annotations

import re
import string
from bisect import bisect_left

__all__ = ["TAG", "visible_starts"]

# Raw HTML tags as cmark-gfm's scanners define them (whitespace may hold line breaks).
_WS = r"[ \t\n\v\f\r]"
_ATTRIBUTE = (
    rf"{_WS}+[A-Za-z_:][A-Za-z0-9_.:-]*"
    rf"""(?:{_WS}*={_WS}*(?:[^ \t\n\v\f\r"'=<>`]+|'[^']*'|"[^"]*"))?"""
)
TAG = rf"<[A-Za-z][A-Za-z0-9-]*(?:{_ATTRIBUTE})*{_WS}*/?>|</[A-Za-z][A-Za-z0-9-]*{_WS}*>"
_DOMAIN = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_AUTOLINK = (
    r"<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^\x00-\x20<>]*>"
    rf"|<[A-Za-z0-9.!#$%&'*+/=?^_`{{|}}~-]+@{_DOMAIN}(?:\.{_DOMAIN})*>"
)
_TAG_OR_AUTOLINK = re.compile(f"{_AUTOLINK}|{TAG}")

# Raw HTML that runs from an opener to the first terminator after it. cmark-gfm's comments are
# `<!-->`, `<!--->` or text not ending in "-" between `<!--` and `-->`; read as running to the
# first `-->` after `<!--` (as older renderers do) they may hide more.
_SHORT_COMMENTS = ("<!-->", "<!--->", "<!---->")
_COMMENT = re.compile(r"<!--")
_COMMENT_END = re.compile(r"-->")
_TERMINATED = (
    (_COMMENT, re.compile(r"(?<!-)-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
    (re.compile(rf"<![A-Z]+{_WS}"), re.compile(r">")),
)
# GFM's extended autolinks (cmark-gfm decides which URLs become links by rules not modelled
# here) run to whitespace or `<`: one that holds "`" or "\\" may change what follows.
_URL = re.compile(r"(?:https?://|ftp://|www\.)[^ \t\n\v\f\r<]*", re.I)
_SPECIAL = re.compile(r"[\\`<]")
_BACKTICKS = re.compile(r"`+")
_NOT_BACKTICK = re.compile(r"[^`]")
_PUNCTUATION = frozenset(string.punctuation)

# Per terminator: where its matches in the paragraph start and end.
_Ends = dict[re.Pattern[str], tuple[list[int], list[int]]]


def _raw_html_end(text: str, start: int, ends: _Ends, long_comments: bool) -> int:
    """Where the raw HTML or autolink at `start` ends, or -1 when `<` starts none."""
    if text.startswith(_SHORT_COMMENTS, start) and not long_comments:
        return text.index(">", start) + 1
    for opener, terminator in _TERMINATED:
        if (opened := opener.match(text, start)) is not None:
            if opener is _COMMENT and long_comments:
                terminator = _COMMENT_END
            if terminator not in ends:
                # Found once per paragraph: many openers never rescan the text.
                found = list(terminator.finditer(text))
                ends[terminator] = ([m.start() for m in found], [m.end() for m in found])
            starts, stops = ends[terminator]
            at = bisect_left(starts, opened.end())
            return stops[at] if at < len(stops) else -1
    tag = _TAG_OR_AUTOLINK.match(text, start)
    return -1 if tag is None else tag.end()


class _Backticks:
    """cmark-gfm's search for the run of backticks that closes a code span, memo included.

    Runs longer than 80 close nothing. Once a search has reached the end in vain, a later one
    gives up when the last run of its length that any search passed starts before it: that memo
    also moves back when a search stops early, so GitHub leaves some spans open that CommonMark
    would close, and a line after one is shown.
    """

    def __init__(self, text: str) -> None:
        self.runs = [(run.start(), len(run[0])) for run in _BACKTICKS.finditer(text)]
        self.starts = [start for start, _ in self.runs]
        self.passed: dict[int, int] = {}
        self.exhausted = False

    def closer(self, pos: int, length: int) -> int:
        """Where the run closing a span opened by `length` backticks ending at `pos` starts."""
        if length > 80 or (self.exhausted and self.passed.get(length, 0) <= pos):
            return -1
        # Searches for one length cover separate stretches, so each run is read 80 times at most.
        for at in range(bisect_left(self.starts, pos), len(self.runs)):
            start, found = self.runs[at]
            if found <= 80:
                self.passed[found] = start
            if found == length:
                return start
        self.exhausted = True
        return -1


def _hidden_spans(text: str, long_comments: bool) -> list[tuple[int, int]]:
    """Spans of `text` that render as code, raw HTML or autolinks."""
    backticks = _Backticks(text)
    ends: _Ends = {}
    spans: list[tuple[int, int]] = []
    pos = 0
    while (special := _SPECIAL.search(text, pos)) is not None:
        start = pos = special.start()
        if text[start] == "\\":
            # A backslash escapes the punctuation after it: "\`" opens no code span.
            pos += 2 if text[start + 1 : start + 2] in _PUNCTUATION else 1
        elif text[start] == "`":
            run_end = _NOT_BACKTICK.search(text, start)
            pos = len(text) if run_end is None else run_end.start()
            # A run of n backticks opens a code span only if a later run of exactly n closes it.
            if (closer := backticks.closer(pos, pos - start)) >= 0:
                spans.append((start, closer + pos - start))
                pos = spans[-1][1]
        else:
            end = _raw_html_end(text, start, ends, long_comments)
            pos = start + 1 if end < 0 else end
            if end >= 0:
                spans.append((start, end))
    return spans


def visible_starts(paragraph: list[tuple[int, str]], long_comments: bool) -> list[int]:
    """The numbers of the paragraph's (number, text) lines that start with ordinary text.

    `long_comments`: an HTML comment runs from `<!--` to the first `-->` after it.
    """
    lines = [text.lstrip(" ") for _, text in paragraph]
    offsets, offset = [], 0
    for line in lines:
        offsets.append(offset)
        offset += len(line) + 1
    text = "\n".join(lines)
    spans = _hidden_spans(text, long_comments)
    for url in _URL.finditer(text):
        if "`" in url[0] or "\\" in url[0]:
            # When in doubt, hidden: every line after it.
            spans.append((url.start(), len(text)))
            break
    hidden = [False] * len(lines)
    for start, end in spans:
        at = bisect_left(offsets, start + 1)
        while at < len(offsets) and offsets[at] < end:
            hidden[at] = True
            at += 1
    return [number for (number, _), gone in zip(paragraph, hidden, strict=True) if not gone]
