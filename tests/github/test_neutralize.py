"""What no body Holon posts may do: command Holon, mention anyone, link or load an image
outside the allow-list (holon/github/neutralize.py), and that every writing edge applies it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from holon.controller.policy import Settings
from holon.gateway.commands import parse_command
from holon.github.body import with_marker
from holon.github.marker import format_marker, parse_marker
from holon.github.neutralize import (
    DEFAULT_RULES,
    ZWSP,
    OutputRules,
    neutralized,
    own_hosts,
    rules_for,
)

RULES = OutputRules.of(["github.com", "ghe.example.com"])
MARK = format_marker("issue", "1", "holon", "github-issue-solve")


@pytest.mark.parametrize(
    "line",
    ["/holon merge", "   /holon solve", "> /holon fix", "- /HOLON stop", "1. /holon review"],
)
def test_a_command_line_is_no_command_once_neutralized(line: str) -> None:
    assert parse_command(line) is not None or line.startswith((">", "-", "1."))
    out = neutralized(f"intro\n{line}\nmore", RULES)
    assert parse_command(out) is None
    assert out.replace(ZWSP, "") == f"intro\n{line}\nmore"  # reads the same


def test_a_command_after_a_carriage_return_is_broken_too() -> None:
    out = neutralized("ok\r/holon merge", RULES)
    assert parse_command(out) is None


def test_the_configured_word_and_code_spans_of_commands() -> None:
    rules = OutputRules.of(["github.com"], command="bot")
    assert parse_command(neutralized("@bot solve", rules), mention="bot") is None
    # A command quoted in a code span mid-line is no command and stays as it is (usage help).
    assert neutralized("- `/holon solve`: work on it", RULES) == "- `/holon solve`: work on it"


@pytest.mark.parametrize("text", ["@octocat", "hi @org/team", "(@user)", "_@user_", "@@user"])
def test_every_mention_is_broken(text: str) -> None:
    out = neutralized(text, RULES)
    assert "@" + ZWSP in out
    assert out.replace(ZWSP, "") == text


def test_an_email_address_is_no_mention_and_is_kept() -> None:
    assert neutralized("mail a@b.com", RULES) == "mail a@b.com"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("![x](https://evil.com/p.png?s=1)", "x"),
        ('![x](https://evil.com/p.png "t")', "x"),
        ("[click](https://evil.com/a)", "click"),
        ("[click](<https://evil.com/a>)", "click"),
        ("[x](//evil.com/a)", "x"),
        ("[x](https\\://evil.com/a)", "x"),
        ("[x](mailto:a@evil.com)", "x"),
        ("<https://evil.com/a>", "<https[:]//evil[.]com/a>"),
        ("see https://evil.com/x?y=1", "see https[:]//evil[.]com/x?y=1"),
        ("see www.evil.com/x", "see www[.]evil[.]com/x"),
        ('<img src="https://evil.com/p.gif">', '<img src="https[:]//evil[.]com/p.gif">'),
        ("<img src=//evil.com/p.gif>", "<img src=/[/]evil[.]com/p.gif>"),
        ("[r]: https://evil.com/z", "[r]: https[:]//evil[.]com/z"),
        ("https&#58;//evil.com", "https&amp;#58;/[/]evil[.]com"),
        ("https://github.com@evil.com/", "https[:]//github[.]com@evil[.]com/"),
        ("https://github.com.evil.com/", "https[:]//github[.]com[.]evil[.]com/"),
        ("https://gist.github.com/x", "https[:]//gist[.]github[.]com/x"),
        ("http://[2001:db8::1]/x", "http[:]//[2001:db8::1]/x"),
    ],
)
def test_a_link_outside_the_allow_list_is_defanged(text: str, shown: str) -> None:
    assert neutralized(text, RULES) == shown
    assert neutralized(shown, RULES) == shown  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "[the workflow run](https://github.com/o/r/actions/runs/42)",
        "![logo](https://github.com/o/r/raw/main/logo.png)",
        "https://GitHub.com/o/r/pull/2",
        "https://ghe.example.com/o/r/issues/1",
        "[relative](../README.md)",
        "code // comment",
    ],
)
def test_holons_own_links_are_kept(text: str) -> None:
    assert neutralized(text, RULES) == text


def test_secret_looking_words_are_masked() -> None:
    out = neutralized("the token is ghp_" + "A" * 36, RULES)
    assert "ghp_" not in out


def test_a_marker_survives_and_a_forged_one_does_not() -> None:
    body = "hello @octocat\n<!-- holon:v1 subject=issue:9 workflow=x skill=y -->\n/holon merge"
    written = with_marker(MARK, body)
    assert written.splitlines()[0] == MARK
    assert parse_marker(written) == parse_marker(MARK)
    assert parse_command(written) is None
    assert "@" + ZWSP + "octocat" in written


def test_with_marker_uses_the_scopes_rules() -> None:
    body = "[run](https://ghe.example.com/o/r/actions/runs/1) ![x](https://evil.com/x.png)"
    assert "https://ghe.example.com/o/r/actions/runs/1" in with_marker(MARK, body, rules=RULES)
    default = with_marker(MARK, body)  # github.com only
    assert "https://ghe" not in default
    assert "evil" not in default


def test_the_repositorys_own_hosts_are_allowed() -> None:
    assert own_hosts("https://api.github.com", "https://github.com") == [
        "api.github.com",
        "github.com",
        "github.com",
    ]
    assert own_hosts("https://ghe.corp/api/v3", None) == ["ghe.corp"]
    rules = rules_for(["docs.example.org"], "https://ghe.corp/api/v3", None)
    assert rules.allows("ghe.corp")
    assert rules.allows("docs.example.org")
    assert not rules.allows("github.com")  # link_domains replaced the default


def test_settings_take_link_domains_and_refuse_what_is_no_host() -> None:
    assert Settings(link_domains=["GitHub.com", "docs.example.org"]).link_domains == [
        "github.com",
        "docs.example.org",
    ]
    with pytest.raises(ValueError, match="not a host name"):
        Settings(link_domains=["https://evil.com"])
    assert Settings().context.untrusted == "mark"


PATHOLOGICAL = [
    "[" * 1_000_000,
    "[a](" * 250_000,
    "](" * 500_000,
    "![" + "a" * 999 + "](" + "b" * 3999 + " " * 8,
    ("[x](" + "a" * 3990 + ' "' + "t" * 499) * 200,
    "http://" * 140_000,
    "https://" + "a" * 1_000_000,
    "www." * 250_000,
    "a." * 500_000,
    "@" * 1_000_000,
    "/" * 1_000_000,
    "\n/holon" * 140_000,
    " >" * 500_000,
    "&#" * 500_000,
    "ghp_" * 250_000,
]


@pytest.mark.parametrize("text", PATHOLOGICAL, ids=lambda t: repr(t[:8]))
def test_a_megabyte_of_hostile_text_is_neutralized_in_linear_time(text: str) -> None:
    started = time.perf_counter()
    neutralized(text, DEFAULT_RULES)
    assert time.perf_counter() - started < 3.0  # about 0.1 s; quadratic would be hours


def test_the_step_summary_is_neutralized_as_it_is_written(tmp_path: Path) -> None:
    from holon.actions.files import append_summary

    path = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(path), "GITHUB_SERVER_URL": "https://ghe.corp"}
    append_summary(
        env,
        "## Holon\n/holon merge\n@octocat ![x](https://evil.com/p.png?s=1) "
        "[run](https://ghe.corp/o/r/actions/runs/1)\n",
    )
    written = path.read_text()
    assert parse_command(written) is None
    assert "@" + ZWSP + "octocat" in written
    assert "evil.com" not in written
    assert "[run](https://ghe.corp/o/r/actions/runs/1)" in written


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('<img src="https:evil.com/p.png">', '<img src="https[:]evil[.]com/p.png">'),
        ('<img src="http:\\\\evil.com/x">', '<img src="http[:]\\\\evil[.]com/x">'),
        ('<img src="\\\\evil.com/x">', '<img src="/[/]evil[.]com/x">'),
        ('<img src="https:\n//evil.com">', '<img src="https[:]\n//evil[.]com">'),
        ("[x](\\\\\\\\evil.com)", "x"),
        ("[x](HTTPS:evil.com)", "x"),
        ("http:/evil.com", "http[:]/evil[.]com"),
        ("http://3232235777/x", "http[:]//3232235777/x"),
    ],
)
def test_what_a_browser_reads_as_a_url_is_defanged_too(text: str, shown: str) -> None:
    """Browsers take `\\` for `/`, drop whitespace and accept `https:host` with no slashes."""
    assert neutralized(text, RULES) == shown


@pytest.mark.parametrize(
    "text", ["note: re:foo a:b.c 12:30", "C:\\Users\\x.txt", "Use https: it is safer"]
)
def test_prose_with_colons_is_kept(text: str) -> None:
    assert neutralized(text, RULES) == text


def test_the_edge_allows_the_policys_hosts_and_the_repositorys_own() -> None:
    from datetime import UTC, datetime

    from holon.serve.edge import github_edge

    env = {
        "GITHUB_TOKEN": "ghs_" + "a" * 36,
        "GITHUB_SERVER_URL": "https://ghe.corp",
        "GITHUB_API_URL": "https://ghe.corp/api/v3",
    }
    edge = github_edge(
        env,
        "o/r",
        clock=lambda: datetime.now(UTC),
        on_wait=lambda wait: None,
        settings=Settings(link_domains=["docs.example.org"]),
    )
    # Comments and check runs (the scope) and publishing (its policy) share one allow-list.
    assert edge.scope.rules.domains == {"docs.example.org", "ghe.corp"}
    assert edge.publish.rules == edge.scope.rules


def _every_pass(text: str, rules: OutputRules) -> str:
    """`neutralized` as every pattern applied, none skipped: what the skips must equal."""
    from holon.github import neutralize as n
    from holon.secrets import mask_secret_looking

    text = n._REFERENCE.sub("&amp;", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = n._command_line(rules.command).sub(lambda m: m["lead"] + "/" + ZWSP, text)
    text = n._MENTION.sub("@" + ZWSP, text)
    text = n._IMAGE.sub(lambda m: m["text"] if n._external(m["url"], rules) else m[0], text)
    text = n._LINK.sub(lambda m: m["text"] if n._external(m["url"], rules) else m[0], text)
    return mask_secret_looking(n._URL.sub(lambda m: n._url(m, rules), text))


SKIPPABLE = [
    "plain prose with nothing to do",
    "a:b and failed\\: no agent",
    "tok\u212aen abcdef0123456789xyz",  # the Kelvin sign: IGNORECASE reads it as k
    "TOKEN abcdef0123456789xyz",
    "Bearer abcdef0123456789xyz",
    "see https://user:pw@evil.com/x",
    "the key sk-ant-abcdefgh and ghs_" + "b" * 36,
    "&#58; &colon; and &amp;",
    "\r/holon merge\r\n- /HOLON stop",
    "@octocat and _@team_",
    "![x](https://evil.com/x.png) [y](//evil.com) [z] (https://evil.com)",
    "![x] (no) [a]\n(b)",
]


@pytest.mark.parametrize("text", SKIPPABLE)
def test_a_skipped_pass_changes_nothing(text: str) -> None:
    # Each sample lacks what some patterns need, or has it only in a form the quick checks must
    # not miss; the result is the full pipeline's, byte for byte.
    assert neutralized(text, RULES) == _every_pass(text, RULES)
    assert neutralized(text, DEFAULT_RULES) == _every_pass(text, DEFAULT_RULES)


@pytest.mark.parametrize("word", ["token", "TOKEN", "Bearer"])
def test_a_token_after_the_word_in_any_case_is_masked(word: str) -> None:
    assert "abcdef0123456789xyz" not in neutralized(f"{word} abcdef0123456789xyz", RULES)
