from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from holon.gateway.commands import KNOWN_COMMANDS, Command, parse_command


def cmd(
    name: str,
    word: str,
    args: str,
    line: int,
    via: str = "slash",
    ignored: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The expected Command, written out by hand in the table below."""
    return {
        "name": name,
        "word": word,
        "args": args,
        "line": line,
        "via": via,
        "ignored": list(ignored),
    }


def row(
    id: str, body: str | None, expected: dict[str, Any] | None, mention: str | None = "holon"
) -> Any:
    return pytest.param(body, mention, expected, id=id)


TABLE = [
    # The six known words.
    row("solve", "/holon solve", cmd("solve", "solve", "", 1)),
    row("review", "/holon review", cmd("review", "review", "", 1)),
    row("fix with args", "/holon fix the flaky test", cmd("fix", "fix", "the flaky test", 1)),
    row("stop", "/holon stop", cmd("stop", "stop", "", 1)),
    row("status", "/holon status", cmd("status", "status", "", 1)),
    row("help", "/holon help", cmd("help", "help", "", 1)),
    # Case-insensitive head and word; args keep their case.
    row("upper case", "/HOLON Solve", cmd("solve", "solve", "", 1)),
    row("args keep case", "/Holon FIX Keep CASE", cmd("fix", "fix", "Keep CASE", 1)),
    # Arguments are data, verbatim apart from surrounding whitespace.
    row(
        "shell args verbatim",
        '/holon solve use $(rm -rf /) and "quotes"',
        cmd("solve", "solve", 'use $(rm -rf /) and "quotes"', 1),
    ),
    row(
        "backticks mid-args",
        "/holon fix run `make test`; echo $HOME | tee x",
        cmd("fix", "fix", "run `make test`; echo $HOME | tee x", 1),
    ),
    row(
        "args stripped, inner spaces kept",
        "/holon   solve    spaced   args   ",
        cmd("solve", "solve", "spaced   args", 1),
    ),
    row("tab separators", "/holon\tsolve\tnow", cmd("solve", "solve", "now", 1)),
    # `/holon` alone is help; other words are a structured unknown.
    row("bare /holon", "/holon", cmd("help", "", "", 1)),
    row("bare /holon, trailing spaces", "/holon   ", cmd("help", "", "", 1)),
    row("unknown word", "/holon deploy now", cmd("unknown", "deploy", "now", 1)),
    row("unknown: punctuation glued to word", "/holon Solve.", cmd("unknown", "solve.", "", 1)),
    # Indentation: up to 3 spaces is fine, 4 spaces or a tab is indented code.
    row("3 spaces", "   /holon status", cmd("status", "status", "", 1)),
    row("4 spaces = code", "    /holon status", None),
    row("tab = code", "\t/holon solve", None),
    row("space then tab = code", " \t/holon solve", None),
    # Fenced code.
    row("``` fence", "```\n/holon solve\n```", None),
    row("``` fence with info", "```bash\n/holon solve\n```\n", None),
    row("~~~ fence", "~~~\n/holon solve\n~~~", None),
    row("```` fence holding ```", "````md\n```\n/holon solve\n```\n````", None),
    row(
        "command after fence", "```\n/holon fix\n```\n/holon review", cmd("review", "review", "", 4)
    ),
    row("unclosed fence", "Try:\n```\n/holon solve\n\nmore text", None),
    row("~~~ not closed by ```", "~~~\n/holon solve\n```\n/holon fix", None),
    row("4-space ``` does not close", "```\n    ```\n/holon solve\n```", None),
    row("3-space ``` closes", "```\n   ```\n/holon solve", cmd("solve", "solve", "", 3)),
    row("fence in a list item", "- ```\n  /holon solve\n  ```", None),
    row("```x``` is inline code, not a fence", "```x```\n/holon fix", cmd("fix", "fix", "", 2)),
    # Inline code, which may cross lines within a paragraph.
    row("inline code", "`/holon solve`", None),
    row("inline code across lines", "see `foo\n/holon solve` bar", None),
    row("inline code, double backticks", "a ``b\n/holon fix`` c", None),
    row("unclosed backtick is text", "see `foo\n/holon solve", cmd("solve", "solve", "", 2)),
    row("escaped backtick", "see \\`foo\n/holon fix it` c", cmd("fix", "fix", "it` c", 2)),
    row("code span ends at a blank", "a `b\n\n/holon stop x` c", cmd("stop", "stop", "x` c", 3)),
    # Block quotes.
    row("quote", "> /holon solve", None),
    row("quote without space", ">/holon solve", None),
    row("nested quote", "> > /holon solve", None),
    # A line right after a quote continues the quote's paragraph (a lazy continuation line).
    row("lazy continuation of a quote", "> quoted text\n/holon solve", None),
    row("lazy continuation, mention", "> see this\n@holon fix", None),
    row("lazy continuation, nested", "> > deep\n   /holon stop", None),
    row("quote ended by a blank line", "> quoted\n\n/holon solve", cmd("solve", "solve", "", 3)),
    row("a quote's fence ends with it", "> ```\n/holon solve", cmd("solve", "solve", "", 2)),
    row("list item", "- /holon solve", None),
    row("after a list item's text", "- item\n/holon fix", cmd("fix", "fix", "", 2)),
    # HTML comments.
    row("html comment", "<!-- /holon solve -->", None),
    row("multi-line html comment", "<!--\n/holon solve\n-->", None),
    row(
        "command after comment closes",
        "<!-- hidden\n/holon stop\n-->\n/holon status",
        cmd("status", "status", "", 4),
    ),
    row("inline comment spanning lines", "Thanks! <!--\n/holon solve\n--> bye", None),
    row(
        "<!-- in a code span hides nothing",
        "Use `<!--` here\n/holon help",
        cmd("help", "help", "", 2),
    ),
    row("<!--> read as still open", "<!-->\n/holon solve", None),
    # HTML blocks: never commands, up to their end (a blank line for most).
    row("html block", "<details>\n/holon solve\n</details>", None),
    row("html block ended", "<div>\n\n/holon review", cmd("review", "review", "", 3)),
    row("tag across lines", 'x <a title="\n/holon solve">', None),
    # Hidden characters before the command.
    row("zero-width space", "\u200b/holon solve", None),
    row("zero-width non-joiner", "\u200c/holon solve", None),
    row("zero-width joiner", "\u200d/holon solve", None),
    row("word joiner after spaces", "  \u2060/holon solve", None),
    row("byte order mark", "\ufeff/holon solve", None),
    row("bidi override", "\u202e/holon solve", None),
    row("bidi isolate", "\u2067/holon fix\u2069", None),
    row("soft hyphen", "\u00ad/holon fix", None),
    row("zero-width space glues head", "/holon\u200bsolve", None),
    row("zero-width space in word", "/holon \u200bsolve", cmd("unknown", "\u200bsolve", "", 1)),
    # Glued or mid-line.
    row("glued word", "/holonsolve", None),
    row("glued hyphen", "/holon-solve", None),
    row("glued prefix", "x/holon solve", None),
    row("mid-line", "please /holon solve", None),
    row("mention mid-line", "cc @holon solve", None),
    # Mention form.
    row("mention", "@holon solve", cmd("solve", "solve", "", 1, "mention")),
    row(
        "mention mixed case",
        "@Holon review please",
        cmd("review", "review", "please", 1, "mention"),
    ),
    row("bare mention", "@holon", cmd("help", "", "", 1, "mention")),
    row("mention indented 2", "  @holon stop", cmd("stop", "stop", "", 1, "mention")),
    row(
        "custom mention",
        "@holon-bot fix",
        cmd("fix", "fix", "", 1, "mention"),
        mention="holon-bot",
    ),
    row("custom mention, default name", "@holon fix", None, mention="holon-bot"),
    row("mention disabled", "@holon solve", None, mention=None),
    row(
        "mention disabled, slash still works",
        "@holon solve\n/holon fix",
        cmd("fix", "fix", "", 2),
        mention=None,
    ),
    row("near miss @holonx", "@holonx solve", None),
    row("near miss @holon-bot", "@holon-bot solve", None),
    row("mention glued comma", "@holon, solve this", None),
    row("mention quoted", "> @holon solve", None),
    # One command per comment: the first wins.
    row(
        "first wins",
        "/holon solve first\n/holon review\n@holon stop now\n/holon bogus",
        cmd(
            "solve",
            "solve",
            "first",
            1,
            ignored=("/holon review", "@holon stop now", "/holon bogus"),
        ),
    ),
    row(
        "unknown first still wins",
        "/holon deploy\n/holon solve",
        cmd("unknown", "deploy", "", 1, ignored=("/holon solve",)),
    ),
    row(
        "ignored lines stripped",
        "/holon fix\n   /holon stop   ",
        cmd("fix", "fix", "", 1, ignored=("/holon stop",)),
    ),
    row(
        "ignored skips quoted and fenced",
        "/holon fix\n> /holon stop\n```\n/holon stop\n```",
        cmd("fix", "fix", "", 1),
    ),
    # Line endings.
    row("CRLF", "Looks good.\r\n\r\n/holon review  \r\n", cmd("review", "review", "", 3)),
    row("CR only", "hi\r/holon stop", cmd("stop", "stop", "", 2)),
    row("CRLF fence", "```\r\n/holon solve\r\n```\r\n/holon fix\r\n", cmd("fix", "fix", "", 4)),
    # Empty bodies and prose.
    row("None", None, None),
    row("empty", "", None),
    row("whitespace only", "  \n\t\n  ", None),
    row("prose only", "holon solve\n/ holon solve", None),
    row(
        "after prose",
        "Thanks for the report.\nI think this needs work.\n\n/holon solve focus on the parser",
        cmd("solve", "solve", "focus on the parser", 4),
    ),
]


@pytest.mark.parametrize(("body", "mention", "expected"), TABLE)
def test_table(body: str | None, mention: str | None, expected: dict[str, Any] | None) -> None:
    result = parse_command(body, mention=mention)
    if expected is None:
        assert result is None
    else:
        assert result is not None
        assert result.model_dump() == expected


def test_table_size() -> None:
    assert len(TABLE) >= 35


def test_default_mention_is_holon() -> None:
    result = parse_command("@holon status")
    assert result is not None
    assert (result.name, result.via) == ("status", "mention")


def test_mention_with_at_sign_is_accepted() -> None:
    result = parse_command("@holon-bot stop", mention="@holon-bot")
    assert result is not None
    assert result.name == "stop"


@pytest.mark.parametrize("mention", ["", "@", "two words", "a@b"])
def test_bad_mention_rejected(mention: str) -> None:
    with pytest.raises(ValueError, match="mention"):
        parse_command("/holon solve", mention=mention)


def test_known_commands() -> None:
    assert KNOWN_COMMANDS == ("solve", "review", "fix", "stop", "status", "help")


def test_command_is_frozen_and_strict() -> None:
    command = Command(name="solve", word="solve", args="", line=1, via="slash", ignored=[])
    with pytest.raises(ValidationError):
        command.args = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Command(name="solve", word="solve", args="", line=1, via="slash", ignored=[], extra=1)  # type: ignore[call-arg]


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(list("/@holnsv \t\n\r>`~<!-\u200bx")), max_size=60))
def test_any_text_parses_to_a_visible_command_line(body: str) -> None:
    result = parse_command(body)
    if result is not None:
        assert result.name in (*KNOWN_COMMANDS, "unknown")
        text = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")[result.line - 1]
        assert text.lstrip(" ").lower().startswith(("/holon", "@holon"))
