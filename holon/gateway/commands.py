"""The `/holon` command in a GitHub comment body.

A command is a line of its own that starts with `/holon` (or `@holon`, the mention form) and is
visible as ordinary text when GitHub renders the comment. Text that renders as code, quoted text
and text GitHub hides (HTML comments and blocks, lines prefixed with invisible characters) never
commands Holon: quoting or showing a command must not re-run it, and nobody may smuggle one in
unseen. How a line renders is decided as GitHub's renderer decides (holon.gateway.markdown_blocks):
a line right after a quoted one belongs to the quote, a code span may cross lines. When in doubt
the parser treats text as code or hidden, so it may miss a command but never invents one. One
command per comment: the first wins and later ones are reported as ignored. Arguments are data:
kept verbatim (stripped), never interpreted here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from holon.gateway.markdown_blocks import text_line_starts

__all__ = ["KNOWN_COMMANDS", "Command", "CommandName", "parse_command"]

CommandName = Literal["solve", "review", "fix", "stop", "status", "help", "unknown"]
KnownName = Literal["solve", "review", "fix", "stop", "status", "help"]

KNOWN_COMMANDS: tuple[KnownName, ...] = ("solve", "review", "fix", "stop", "status", "help")
_NAMES: dict[str, CommandName] = {word: word for word in KNOWN_COMMANDS}

# \r\n first so a Windows line ending counts as one break, not two.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


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

    lines = _LINE_BREAK.split(body)
    # Most comments hold no command line at all; only one that does is worth reading as Markdown.
    if not any(pattern.fullmatch(line) for line in lines):
        return None
    first: tuple[re.Match[str], int] | None = None
    ignored: list[str] = []
    for index in text_line_starts(lines):
        match = pattern.fullmatch(lines[index])
        if match is None:
            continue
        if first is None:
            first = (match, index + 1)
        else:
            ignored.append(lines[index].strip())
    return None if first is None else _to_command(*first, ignored)
