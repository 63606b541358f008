"""Which lines of a comment GitHub shows as the start of a line of ordinary text.

GitHub renders comments with cmark-gfm: CommonMark, a line break inside a paragraph shown as
one. This models its block structure, pure Python: block quotes and list items are containers;
paragraphs, fenced and indented code, HTML blocks, headings and thematic breaks are leaves. A
line counts when it belongs to a paragraph (or the heading one becomes) inside no block quote,
lazy continuation lines included, and does not start inside inline code or raw HTML
(holon.gateway.markdown_inline). Renderers disagree on where `<!-->` and `--->` end a comment:
a body holding them is read both ways and a line counts only if both show it. Not modelled:
links and images (a line in an image's alt text or a link title is hidden on GitHub, yet counts
here), link reference definitions, tables, footnotes.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Literal

from holon.gateway.markdown_inline import TAG, visible_starts

__all__ = ["text_line_starts"]

_NOT_SPACE = re.compile(r"[^ ]")
_ATX = re.compile(r"#{1,6}(?: |\Z)")
_SETEXT = re.compile(r"(?:=+|-+) *\Z")
_FENCE = re.compile(r"(`{3,})[^`]*\Z|(~{3,})")
_CLOSING_FENCE = re.compile(r"(`{3,}|~{3,}) *\Z")
# The characters any block but a paragraph starts with.
_STARTS = frozenset(">#=-*_`~<+0123456789")
_MARKER = re.compile(r"(?:[-+*]|(\d{1,9})[.)])(?= |\Z)")

_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|"
    "dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|"
    "header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|"
    "param|search|section|source|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
# How HTML blocks start, and what ends each (None: a blank line), maybe on their first line.
_HTML_BLOCKS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (
        re.compile(r"<(?:script|pre|style|textarea)(?=[ \v\f>]|\Z)", re.I),
        re.compile(r"</(?:script|pre|style|textarea)>", re.I),
    ),
    (re.compile(r"<!--"), re.compile(r"-->")),
    (re.compile(r"<\?"), re.compile(r"\?>")),
    (re.compile(r"<![A-Z]"), re.compile(r">")),
    (re.compile(r"<!\[CDATA\["), re.compile(r"\]\]>")),
    (re.compile(rf"</?(?:{_BLOCK_TAGS})(?=[ \v\f>]|/>|\Z)", re.I), None),
)
# A line holding one tag is an HTML block too, one that cannot interrupt a paragraph.
_TAG_LINE = re.compile(rf"(?:{TAG})[ \f]*\Z")

# An open HTML block's end: a pattern, or None for a blank line; False when none is open.
_HtmlEnd = re.Pattern[str] | None | Literal[False]
# A leaf other than a paragraph: (fence character and length, HTML block end), as _Blocks keeps.
_Leaf = tuple[tuple[str, int] | None, _HtmlEnd]


def _skip_spaces(text: str, pos: int) -> int:
    """Where the spaces from `pos` on end."""
    found = _NOT_SPACE.search(text, pos)
    return len(text) if found is None else found.start()


@dataclass
class _Container:
    quote: bool
    indent: int = 0
    """A list item's: how far its content is indented."""
    filled: bool = False
    """A list item's: whether it holds a block yet (an empty item ends at a blank line)."""


@dataclass
class _Blocks:
    """CommonMark's block parsing, line by line, keeping only what decides visibility."""

    starts: list[int] = field(default_factory=list)
    containers: list[_Container] = field(default_factory=list)
    quotes: list[int] = field(default_factory=list)
    """Indexes of the block quotes among the containers."""
    paragraph: list[tuple[int, str]] | None = None
    quoted: bool = False
    fence: tuple[str, int] | None = None
    html: _HtmlEnd = False
    code: bool = False
    long_comments: bool = False
    """Whether a comment's end is looked for after its `<!--` only (`<!-->` leaves it open)."""

    def line(self, number: int, text: str) -> None:
        pos, matched = self._match(text)
        blank = _skip_spaces(text, pos) == len(text)
        if matched == len(self.containers) and self._in_leaf(text, pos, blank):
            return
        lazy = self.paragraph is not None
        interrupts = lazy and matched == len(self.containers)
        rules: dict[str, int] = {}
        opened = False
        while True:
            first = _skip_spaces(text, pos)
            if first - pos >= 4:
                if not lazy and first < len(text):
                    self._open(matched, opened)
                    self.code = True
                    return
                break
            if text[first : first + 1] not in _STARTS:
                break  # the common case: plain text starts no block
            if text.startswith(">", first):
                self._open(matched, opened)
                self.containers.append(_Container(quote=True))
                self.quotes.append(len(self.containers) - 1)
                pos = first + 1 + text.startswith(" ", first + 1)
            elif (leaf := self._leaf(text, first, interrupts, rules)) is not None:
                self._open(matched, opened)
                self.fence, self.html = leaf
                return
            elif (item := self._item(text, pos, first, interrupts)) is not None:
                self._open(matched, opened)
                self.containers.append(item[0])
                pos = item[1]
            else:
                break
            opened, lazy, interrupts = True, False, False
        if not opened and matched < len(self.containers):
            if self.paragraph is not None and not blank:
                # A lazy continuation line joins the open paragraph, whatever holds that.
                self.paragraph.append((number, text[first:]))
                return
            self._close(matched)
        if first == len(text):
            return
        if self.paragraph is None:
            self._fill()
            self.paragraph, self.quoted = [], bool(self.quotes)
        self.paragraph.append((number, text[first:]))

    def finish(self) -> list[int]:
        self._close(0)
        return self.starts

    def _match(self, text: str) -> tuple[int, int]:
        """Where the line's container prefixes end, and how many open containers they continue."""
        pos = 0
        for matched, container in enumerate(self.containers):
            first = _skip_spaces(text, pos)
            if first == len(text):
                # A blank rest continues list items that hold something, never a block quote.
                until = bisect_left(self.quotes, matched)
                stop = self.quotes[until] if until < len(self.quotes) else len(self.containers)
                if stop == len(self.containers) and not self.containers[-1].filled:
                    stop -= 1
                return first, stop
            if container.quote and first - pos <= 3 and text.startswith(">", first):
                pos = first + 1 + text.startswith(" ", first + 1)
            elif not container.quote and first - pos >= container.indent:
                pos += container.indent
            else:
                return pos, matched
        return pos, len(self.containers)

    def _in_leaf(self, text: str, pos: int, blank: bool) -> bool:
        """Whether the line belongs to (or ends) the open leaf; a paragraph ends at a blank."""
        first = _skip_spaces(text, pos)
        if self.fence is not None:
            closing = _CLOSING_FENCE.match(text, first)
            char, length = self.fence
            if first - pos <= 3 and closing and closing[1][0] == char and len(closing[1]) >= length:
                self.fence = None
            return True
        if self.html is not False:
            if (blank and self.html is None) or (self.html and self.html.search(text, pos)):
                self.html = False
            return True
        if self.code:
            self.code = blank or first - pos >= 4
            return self.code
        if self.paragraph is not None and blank:
            self._close(len(self.containers))
            return True
        return False

    def _leaf(self, text: str, first: int, interrupts: bool, rules: dict[str, int]) -> _Leaf | None:
        """The leaf block other than a paragraph that starts at `first`, if one does."""
        char = text[first]
        if char in "-*_" and char not in rules:
            # Where the line's tail of only `char` and spaces starts: a thematic break is found
            # without rescanning the line for every list marker nested on it.
            rules[char] = len(text.rstrip(char + " "))
        thematic = rules.get(char, first + 1) <= first and text.count(char, first) >= 3
        if thematic or _ATX.match(text, first) or (interrupts and _SETEXT.match(text, first)):
            return None, False
        if fence := _FENCE.match(text, first):
            return (fence[0][0], len(fence[1] or fence[2])), False
        for opener, end in _HTML_BLOCKS:
            if opened := opener.match(text, first):
                # A block that ends on its first line is already over.
                after = opened.end() if opened[0] == "<!--" and self.long_comments else first
                return None, end if end is None or not end.search(text, after) else False
        if not interrupts and _TAG_LINE.match(text, first):
            return None, None
        return None

    @staticmethod
    def _item(text: str, pos: int, first: int, interrupts: bool) -> tuple[_Container, int] | None:
        """The list item starting at `first`, and where its content starts, if one does."""
        marker = _MARKER.match(text, first)
        if marker is None:
            return None
        content = _skip_spaces(text, marker.end())
        empty = content == len(text)
        # Only a non-empty item may interrupt a paragraph, and of ordered ones only a first.
        if interrupts and (empty or (marker[1] is not None and int(marker[1]) != 1)):
            return None
        if empty or content - marker.end() > 4:
            # After more than 4 spaces the content is indented code: the item's own is 1 space.
            indent = marker.end() + 1 - pos
            return _Container(quote=False, indent=indent), min(content, marker.end() + 1)
        return _Container(quote=False, indent=content - pos), content

    def _open(self, matched: int, opened: bool) -> None:
        """A block starts after the first `matched` containers: ends what it replaces."""
        if not opened:
            self._close(matched)
        self._fill()

    def _fill(self) -> None:
        if self.containers and not self.containers[-1].quote:
            self.containers[-1].filled = True

    def _close(self, keep: int) -> None:
        """Ends the open leaf and every container after the first `keep`."""
        if self.paragraph is not None and not self.quoted:
            self.starts.extend(visible_starts(self.paragraph, self.long_comments))
        self.paragraph, self.fence, self.html, self.code = None, None, False, False
        del self.containers[keep:]
        while self.quotes and self.quotes[-1] >= keep:
            self.quotes.pop()


def _read(lines: list[str], long_comments: bool) -> list[int]:
    blocks = _Blocks(long_comments=long_comments)
    for number, line in enumerate(lines):
        blocks.line(number, line)
    return blocks.finish()


def text_line_starts(lines: list[str]) -> list[int]:
    """Indexes, in order, of the lines GitHub shows as the start of a line of ordinary text."""
    # Tabs count as spaces to the next multiple of 4; cmark reads NUL as U+FFFD.
    lines = [line.expandtabs(4).replace("\0", "\ufffd") for line in lines]
    starts = _read(lines, long_comments=False)
    if any("<!-->" in line or "--->" in line for line in lines):
        # Renderers disagree on where such comments end: hidden under either reading, hidden.
        starts = sorted(set(starts).intersection(_read(lines, long_comments=True)))
    return starts
