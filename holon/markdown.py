"""Markdown-safe rendering of untrusted text (issue titles, model output, logs).

Everything Holon writes to GitHub is Markdown that GitHub turns into HTML, links mentions in and
scans for Holon's own hidden markers. Untrusted text must not escape its place: inline text is
escaped so it cannot start Markdown structure, raw HTML, an HTML comment (a forged marker) or an
@-mention; block text goes into a code fence longer than any backtick run inside it.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Invisible characters that can hide content or reorder it on screen (bidi overrides, zero-width
# characters, the BOM): removed from untrusted text before anything else.
# Tag characters (U+E0000..U+E007F) spell hidden ASCII. C1 controls (U+0080..U+009F) include CSI,
# which some terminals act on as ESC [ does.
HIDDEN = re.compile(
    "[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_INLINE_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>=:])")
_MENTION = re.compile(r"@(?=\w)")
_ZWSP = "\u200b"


class Trusted(str):
    """Text Holon itself produced (markup, links, markers): rendered as is."""

    __slots__ = ()


def clean(text: str) -> str:
    """Remove hidden and control characters (keeps newlines and tabs)."""
    return _CONTROL.sub("", HIDDEN.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))


# Templates escape the same short values again and again (an outcome, a label, a skill's name):
# those are kept, the rest (long, unlikely to recur) is escaped each time and never held.
_CACHED_INLINE = 256


def inline(text: str) -> str:
    """Untrusted text as one line of literal Markdown text."""
    if len(text) <= _CACHED_INLINE:
        return _inline_short(text)
    return _inline(text)


@lru_cache(maxsize=1024)
def _inline_short(text: str) -> str:
    return _inline(text)


def _inline(text: str) -> str:
    one_line = " ".join(clean(text).split())
    escaped = one_line.replace("&", "&amp;")
    escaped = _INLINE_SPECIAL.sub(r"\\\1", escaped)
    # A zero-width space after @ keeps GitHub from turning the text into a mention.
    return _MENTION.sub("@" + _ZWSP, escaped)


def block(text: str, info: str = "text") -> Trusted:
    """Untrusted multi-line text as a fenced code block it cannot break out of."""
    body = clean(text).rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    # Inside a fence nothing renders, but a marker scanner reads raw text: break `<!--`.
    body = body.replace("<!--", "<" + _ZWSP + "!--")
    return Trusted(f"{fence}{info}\n{body}\n{fence}")


def plain(text: str) -> str:
    """Untrusted text for a plain-text surface (terminal, log): hidden characters removed."""
    return clean(text)


_SAFE_URL = re.compile(r"https?://[^\s<>\"'`]+")


def link(text: str, url: str | None) -> Trusted:
    """A Markdown link for an http(s) URL; any other URL is shown as escaped text only."""
    label = inline(text)
    if url is None or not _SAFE_URL.fullmatch(url):
        return Trusted(label)
    target = url.replace("(", "%28").replace(")", "%29")
    return Trusted(f"[{label}]({target})")


def code(text: str) -> Trusted:
    """Untrusted text as an inline code span it cannot break out of."""
    body = " ".join(clean(text).split())
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return Trusted(f"{ticks}{pad}{body}{pad}{ticks}")


_MARKER_OPEN = "<!--"


def prose(text: str) -> Trusted:
    """Untrusted Markdown kept as Markdown (an agent's review: code blocks, suggestions, lists
    render), with what it must not do taken away: hidden and control characters removed,
    every `@` before a word broken so nobody is mentioned, every `<!--` broken so it cannot
    hide text or carry a marker."""
    body = clean(text).replace(_MARKER_OPEN, "<" + _ZWSP + "!--")
    return Trusted(_MENTION.sub("@" + _ZWSP, body))
