"""The `/holon` command in a GitHub comment body.

A command is a line of its own that starts with `/holon` (or `@holon`, the mention form) and is
visible as ordinary text when GitHub renders the comment. Text that renders as code, quoted text
and text GitHub hides (HTML comments, lines prefixed with invisible characters) never commands
Holon: quoting or showing a command must not re-run it, and nobody may smuggle one in unseen.
When in doubt the parser treats text as code or hidden, so it may miss a command but never
invents one. One command per comment: the first wins and later ones are reported as ignored.
Arguments are data: kept verbatim (stripped), never interpreted here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["KNOWN_COMMANDS", "Command", "CommandName", "parse_command"]

CommandName = Literal["solve", "review", "fix", "stop", "status", "help", "unknown"]
KnownName = Literal["solve", "review", "fix", "stop", "status", "help"]

KNOWN_COMMANDS: tuple[KnownName, ...] = ("solve", "review", "fix", "stop", "status", "help")
_NAMES: dict[str, CommandName] = {word: word for word in KNOWN_COMMANDS}

# \r\n first so a Windows line ending counts as one break, not two.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# A fence opens on a line indented by at most 3 spaces, optionally inside list items (`- ```` is
# a fence too); `indent` is where the item's content starts, which bounds the closing fence.
_FENCE_OPEN = re.compile(
    r"(?P<indent> {0,3}(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*)(?P<fence>`{3,}|~{3,})(?P<info>.*)"
)

# Inline code spans: a backtick run closed by the next run of the same length.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)")

_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"


class Command(BaseModel):
    """The command a comment gives Holon."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: CommandName
    word: str
    """The subcommand word as written, lower-cased ("" for `/holon` alone)."""
    args: str
    """Everything after the subcommand word, stripped; data, never evaluated."""
    line: int
    """1-based line number of the command in the body."""
    via: Literal["slash", "mention"]
    ignored: list[str]
    """Every later command line in the same comment, stripped: only the first one counts."""


@lru_cache(maxsize=16)
def _command_line(mention: str | None) -> re.Pattern[str]:
    # The head must end at whitespace or the end of line: `/holonsolve`, `/holon-solve` and
    # `@holon-bot` (for mention "holon") are other words, not commands.
    heads = [r"(?P<slash>/holon)"]
    if mention is not None:
        heads.append(r"(?P<mention>@" + re.escape(mention) + ")")
    # Only spaces before the head: a tab or 4+ spaces is indented code, and anything else (a
    # quote marker, a backtick, an invisible character) means the line is not a plain command.
    return re.compile(r" {0,3}(?:" + "|".join(heads) + r")(?=\s|\Z)(?P<rest>.*)", re.IGNORECASE)


def _check_mention(mention: str | None) -> str | None:
    if mention is None:
        return None
    name = mention.removeprefix("@")
    if not name or any(ch.isspace() for ch in name) or "@" in name:
        raise ValueError(f"mention must be a bare name like 'holon', got {mention!r}")
    return name


def _in_comment_after(text: str, in_comment: bool) -> bool:
    """Whether an HTML comment is still open after `text`, given whether it was open before."""
    pos = 0
    while True:
        if in_comment:
            end = text.find(_COMMENT_CLOSE, pos)
            if end < 0:
                return True
            pos, in_comment = end + len(_COMMENT_CLOSE), False
        else:
            start = text.find(_COMMENT_OPEN, pos)
            if start < 0:
                return False
            # Searching for the close after the full opener treats `<!-->` as still open: the
            # safe reading when renderers disagree.
            pos, in_comment = start + len(_COMMENT_OPEN), True


def _to_command(match: re.Match[str], line: int, ignored: list[str]) -> Command:
    parts = match["rest"].split(maxsplit=1)
    word = parts[0].lower() if parts else ""
    return Command(
        name=_NAMES.get(word, "unknown") if word else "help",
        word=word,
        args=parts[1].strip() if len(parts) > 1 else "",
        line=line,
        via="slash" if match["slash"] is not None else "mention",
        ignored=ignored,
    )


def parse_command(body: str | None, *, mention: str | None = "holon") -> Command | None:
    """The first command in a comment body, or None when it has none.

    `mention` is the name that `@name` commands answer to (case-insensitive); None disables the
    mention form. Raises ValueError for a mention that is not a bare name.
    """
    pattern = _command_line(_check_mention(mention))
    if not body:
        return None

    first: tuple[re.Match[str], int] | None = None
    ignored: list[str] = []
    fence: tuple[str, int, int] | None = None  # (fence character, length, content indent)
    in_comment = False

    for number, text in enumerate(_LINE_BREAK.split(body), start=1):
        if in_comment:
            # Inside an HTML comment nothing is markdown; only its end matters.
            in_comment = _in_comment_after(text, True)
            continue
        if fence is not None:
            char, length, indent = fence
            closing = rf" {{0,{indent + 3}}}{re.escape(char)}{{{length},}}[ \t]*"
            if re.fullmatch(closing, text):
                fence = None
            continue
        opened = _FENCE_OPEN.fullmatch(text)
        # A backtick fence's info string cannot hold a backtick: "```x```" is inline code.
        if opened and not (opened["fence"][0] == "`" and "`" in opened["info"]):
            fence = (opened["fence"][0], len(opened["fence"]), len(opened["indent"]))
            continue

        match = pattern.fullmatch(text)
        if match is not None:
            if first is None:
                first = (match, number)
            else:
                ignored.append(text.strip())
        # Backticks hide `<!--` from the comment scanner only outside a comment.
        in_comment = _in_comment_after(_CODE_SPAN.sub("", text), False)

    return None if first is None else _to_command(*first, ignored)
