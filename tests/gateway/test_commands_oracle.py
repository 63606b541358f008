"""parse_command against GitHub's own renderer, cmark-gfm (the `cmarkgfm` package), as oracle.

The oracle says which lines of a body command Holon:

1. The source line starts with up to 3 spaces, then `/holon` or `@<mention>`, then whitespace or
   the end of the line. This is the parser's own line-start rule, stated again here: the
   rendered HTML cannot show it, as cmark strips a paragraph line's indentation.
2. cmark-gfm renders the body (`github_flavored_markdown_to_html`, GitHub's extensions, safe
   mode) with the line's text at the start of a rendered line: after the start of a block, or a
   line break (a soft break, which GitHub shows as a break in comments, or a hard `<br />`),
   with only whitespace before it on that line.
3. That text is in no <blockquote>, <pre> or <code>. Raw HTML (HTML blocks, comments, inline
   tags) is left out in safe mode, so text inside it is never found; Holon's rule is the same,
   even where GitHub would show the text of an HTML block.

Paragraphs, headings (a paragraph underlined with `---`) and list items are what such text can
be in here. To find a line in the output, the name in the head of every line that passes (1)
is replaced by a marker of letters and digits (`/holon` becomes `/zqmark7q`), which no Markdown
rule treats differently.

The generated bodies are made of building blocks (plain lines, command lines, quotes with and
without lazy continuation lines, inline code across lines, fenced and indented code, HTML
comments and blocks, list items, headings, blank lines, trailing spaces), so each test body
mixes them. They leave out what the parser does not model (links, images, tables, autolinked
URLs) and comments written `<!-->`, `<!--->` or ending `--->`, which renderers end in different
places and the parser reads both ways, keeping a line only if both show it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from holon.gateway.commands import parse_command

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MARKER = re.compile(r"[/@]zqmark(\d+)q")
# Tags after whose start or end a rendered line starts afresh.
_BLOCKS = frozenset(
    {"p", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "div"}
    | {"table", "thead", "tbody", "tr", "td", "th", "hr"}
)
_NOT_TEXT = frozenset({"blockquote", "pre", "code"})
_VOID = frozenset({"br", "hr", "img", "input"})


class _Visible(HTMLParser):
    """Walks cmark's HTML, noting which markers start a rendered line of text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.line = ""
        self.found: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS or tag == "br":
            self.line = ""
        if tag not in _VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:
            while self.open.pop() != tag:
                pass
        if tag in _BLOCKS:
            self.line = ""

    def handle_comment(self, data: str) -> None:
        self.line += "<omitted>"  # raw HTML was here: what follows does not start the line

    def handle_data(self, data: str) -> None:
        for index, piece in enumerate(data.split("\n")):
            if index:
                self.line = ""
            for marker in _MARKER.finditer(piece):
                starts = not (self.line + piece[: marker.start()]).strip()
                if starts and not _NOT_TEXT.intersection(self.open):
                    self.found.append(int(marker[1]))
            self.line += piece


def oracle(body: str, mention: str | None) -> tuple[list[int], str]:
    """The 0-based numbers of the lines that command Holon, and the HTML they were read from."""
    heads = "/holon" if mention is None else f"/holon|@{re.escape(mention)}"
    head = re.compile(rf"( {{0,3}})({heads})(?=\s|\Z)", re.IGNORECASE)
    marked = []
    for number, line in enumerate(_LINE_BREAK.split(body)):
        if (match := head.match(line)) is not None:
            line = f"{match[1]}{match[2][0]}zqmark{number}q{line[match.end() :]}"
        marked.append(line)
    html: str = cmarkgfm.github_flavored_markdown_to_html("\n".join(marked))
    walker = _Visible()
    walker.feed(html)
    walker.close()
    return sorted(set(walker.found)), html


def check(body: str, mention: str | None = "holon") -> None:
    found, html = oracle(body, mention)
    lines = _LINE_BREAK.split(body)
    expected = (found[0] + 1, [lines[n].strip() for n in found[1:]]) if found else None
    result = parse_command(body, mention=mention)
    actual = None if result is None else (result.line, result.ignored)
    assert actual == expected, f"rendered as {html!r}"


# (body, the line of the command, or None): each checked against the oracle and the parser.
REGRESSIONS = [
    # A lazy continuation line: CommonMark puts it in the quote's paragraph.
    ("> quoted text\n/holon solve", None),
    ("> > nested\n/holon solve", None),
    (">quote\n   @holon fix", None),
    ("- > quote in a list item\n  /holon solve", None),
    # An inline code span may cross a line break.
    ("see `foo\n/holon solve` bar", None),
    ("see ``foo\n/holon solve`` bar", None),
    ("a\n    ```\n/holon solve ```", None),
    # ...but only inside its paragraph, and only when it closes.
    ("see `foo\n\n/holon solve` bar", 3),
    ("see `foo\n/holon solve", 2),
    ("see \\`foo\n/holon solve` bar", 2),
    # cmark-gfm gives up on a closer once a search for another length has found none (``) and
    # a later search passed its length earlier on: GitHub shows this line, so it counts.
    ("x ``\nsee `foo\n` bar\nsee `foo\n/holon solve` bar", 5),
    # A blank line, or a block that is not a paragraph, ends the quote.
    ("> quoted text\n\n/holon solve", 3),
    ("> ```\n/holon solve", 2),
    ("> <!--\n/holon solve", 2),
    # Raw HTML: a tag or comment across lines, an HTML block up to its end.
    ('x <a title="\n/holon solve">', None),
    ("Thanks <!-- a\n/holon solve --> bye", None),
    ("<details>\n/holon solve\n</details>", None),
    ("<details>\n\n/holon solve", 3),
    ("<span>\n/holon solve", None),
    ("x\n<span>\n/holon solve", 3),
    ("<!-- done -->\n/holon solve", 2),
    # Text in list items and headings is shown at the start of a line.
    ("- item\n/holon solve", 2),
    ("- item\n  /holon solve", 2),
    ("/holon solve\n---", 1),
    # Indentation: a paragraph line may be indented any amount, the command line only 0-3.
    ("text\n    /holon solve", None),
    ("1.     code\n   /holon solve", 2),
]


@pytest.mark.parametrize(("body", "line"), REGRESSIONS)
def test_regressions(body: str, line: int | None) -> None:
    # The oracle must say so too: otherwise the property test below would check nothing.
    found, _ = oracle(body, "holon")
    assert (found[0] + 1 if found else None) == line
    result = parse_command(body)
    assert (result.line if result else None) == line


def test_oracle_sees_a_plain_command() -> None:
    assert oracle("hi\n/holon solve\n@holon fix", "holon")[0] == [1, 2]
    assert oracle("hi\n/holon solve\n@holon fix", None)[0] == [1]


_WORDS = st.sampled_from(["Thanks", "see the log", "LGTM", "*note*", "a ~~b~~", "x 1. y"])
_TRAILING = st.sampled_from(["", "", " ", "  "])
# Mostly heads and indents that make a command line, some that do not.
_INDENT = st.sampled_from(["", "", "", " ", "   ", "    ", "\t"])
_HEAD = st.sampled_from(["/holon", "/holon", "/HOLON", "@holon", "@Holon", "@holon-bot", "/holonx"])
_WORD = st.sampled_from(["", " solve", " review", " fix", " stop", " status", " help", " deploy"])
_ARGS = st.sampled_from(["", " now", " the flaky test", " `make test`", " `a", " b``"])

plain = st.builds(lambda words, end: [words + end], _WORDS, _TRAILING)
command = st.builds(lambda *parts: ["".join(parts)], _INDENT, _HEAD, _WORD, _ARGS, _TRAILING)
line = st.one_of(plain, command)
# Lines to put inside other blocks.
inner = st.lists(line, min_size=0, max_size=3).map(lambda ls: [x for lines in ls for x in lines])


def _quote(marker: str, first: list[str], lazy: list[str]) -> list[str]:
    return [marker + first[0], *lazy]


quote = st.builds(
    _quote,
    st.sampled_from(["> ", ">", "> > ", "   > "]),
    line,
    st.one_of(st.just([]), command, command, plain),  # a lazy continuation line, or none
)


def _code_span(ticks: str, opener: str, middle: list[str], closer: str) -> list[str]:
    return [f"see {ticks}{opener}", *middle, f"{closer}{ticks} bar"]


code_span = st.builds(
    _code_span,
    st.sampled_from(["`", "``"]),
    st.sampled_from(["foo", ""]),
    inner,
    st.sampled_from(["", "/holon solve", "x"]),
)
fence = st.builds(
    lambda indent, marks, info, body: [indent + marks[0] + info, *body, *marks[1]],
    st.sampled_from(["", " ", "   "]),
    # (opening fence, closing lines): mostly closed, sometimes by a fence that does not close it.
    st.sampled_from(
        [("```", ["```"]), ("~~~", ["~~~ "]), ("````", ["`````"]), ("```", [" ```"])] * 2
        + [("```", []), ("```", ["~~~"]), ("````", ["```"]), ("```", ["    ```"])]
    ),
    st.sampled_from(["", "bash", " md"]),
    inner,
)
indented = st.builds(lambda pad, body: [pad + body[0]], st.sampled_from(["    ", "\t"]), command)
comment = st.one_of(
    st.builds(lambda body: [f"<!-- {' '.join(body)} -->"], inner),
    st.builds(lambda body: ["<!--", *body, "-->"], inner),
    st.builds(lambda body: ["Thanks <!-- hidden", *body, "--> bye"], inner),
    st.just(["<!-- never closed"]),
    st.just(["<!--", "-->"]),
)
html_block = st.builds(
    # Only a blank line ends most HTML blocks (a <pre> one ends at </pre>).
    lambda tag, body, end: [f"<{tag}>", *body, f"</{tag}>", *end],
    st.sampled_from(["details", "div", "span", "pre"]),
    inner,
    st.sampled_from([[""], [""], []]),
)
list_item = st.builds(
    lambda marker, first, rest: [marker + first[0], *rest],
    st.sampled_from(["- ", "* ", "1. ", "2) ", "  - "]),
    line,
    st.one_of(st.just([]), command, command.map(lambda ls: ["  " + ls[0]])),
)
heading = st.sampled_from([["# Title"], ["## /holon solve"], ["---"], ["==="], ["***"]])
blank = st.just([""])

block = st.one_of(
    command, command, command, plain, quote, quote, code_span, fence, indented, comment
) | st.one_of(html_block, list_item, heading, blank, blank)
bodies = st.builds(
    lambda blocks, newline: newline.join(x for lines in blocks for x in lines),
    st.lists(block, min_size=1, max_size=8),
    st.sampled_from(["\n", "\n", "\r\n"]),
)


# No deadline: the machine is shared, and the number of examples bounds the time.
@settings(max_examples=400, deadline=None)
@given(bodies, st.sampled_from(["holon", "holon", "holon-bot", None]))
def test_parser_agrees_with_github(body: str, mention: str | None) -> None:
    check(body, mention)


# Any text from Markdown's punctuation (no links or tables): the parser may miss a command where
# it cannot be sure, but every command it finds is one GitHub shows.
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *("\n/holon solve", "\n@holon fix", "\n", "\n", " ", "    ", "\t", "> ", "`"),
                *("```", "~~~", "<!--", "-->", "<div>", "<b>", "- ", "*", "1. ", "#", "=", "\\"),
                *("<", '"', "x"),
            ]
        ),
        max_size=24,
    ).map("".join)
)
def test_parser_never_finds_a_command_github_does_not_show(body: str) -> None:
    found, html = oracle(body, "holon")
    lines = _LINE_BREAK.split(body)
    result = parse_command(body)
    if result is not None:
        assert result.line - 1 in found, f"rendered as {html!r}"
        shown = [lines[n].strip() for n in found]
        assert all(text in shown for text in result.ignored), f"rendered as {html!r}"
