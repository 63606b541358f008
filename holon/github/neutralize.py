"""What no body Holon posts may do, whoever wrote its text: command Holon, mention anyone, or
link (or load an image) outside the allow-listed domains. Pure; applied at the edge where a body
is written (`body.with_marker`, publishing's PR, review and reply bodies), after everything else.

- A line starting with `/holon` (after spaces, quote markers or a list marker) gets a zero-width
  space after its slash: it reads the same, but the command parser
  (`holon.gateway.commands`) no longer sees a command there.
- Every `@name` and `@org/team` gets a zero-width space after its `@` (as `markdown.inline`
  does), so GitHub links and notifies no one. Holon mentions nobody on purpose: no exception.
- Links: a Markdown image whose target is outside the allow-list becomes its alt text (an image
  is fetched by whoever views the page, so its query string could carry data out); a Markdown
  link there becomes its text; every other URL outside it (bare, `<autolink>`, `www.`, in raw
  HTML, in a reference definition, scheme-relative `//host`, and what a browser reads as one:
  `https:evil.com`, `\\evil.com`, `http:\\evil.com`) is defanged: `https[:]//evil[.]com` is
  neither a link GitHub makes nor one a browser follows. Numeric character references (and
  the named ones for `:` `/` `.`) are broken first, so `https&#58;//` cannot hide a scheme.
  Hosts are compared exactly (lowercased): `github.com` does not allow `gist.github.com`.

Last, a word that looks like a secret (a `ghp_`/`sk-ant-` token, a URL password:
`holon.secrets.mask_secret_looking`) is masked: the agent never holds Holon's secrets, and should
it echo one it learned some other way, it is not posted.

Everything is idempotent (a neutralized body neutralized again is the same body: comments are
compared to what they already say) and linear: every pattern is bounded or anchored so a 1 MB
hostile body costs milliseconds.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from holon.secrets import SECRET_PREFIXES, mask_secret_looking

ZWSP = "\u200b"
DEFAULT_DOMAINS = ("github.com",)


def _domains(values: Iterable[str]) -> frozenset[str]:
    return frozenset(v.strip().lower().rstrip(".") for v in values if v.strip())


@dataclass(frozen=True)
class OutputRules:
    """What a body may keep: links to `domains` (exact hosts), and `command` is the slash
    command word (`/holon`) broken at the start of a line."""

    domains: frozenset[str] = field(default_factory=lambda: _domains(DEFAULT_DOMAINS))
    command: str = "holon"

    @classmethod
    def of(cls, domains: Iterable[str], command: str = "holon") -> OutputRules:
        return cls(_domains(domains), command)

    def allows(self, host: str) -> bool:
        return host.lower() in self.domains


DEFAULT_RULES = OutputRules()


def own_hosts(api_url: str | None, server_url: str | None = None) -> list[str]:
    """The repository's own GitHub hosts, which its links (the Actions run, artifacts) are on:
    the server's (`GITHUB_SERVER_URL`), and the API's with `api.` dropped (`api.github.com`
    serves `github.com`; an Enterprise server serves both from one host)."""
    hosts: list[str] = []
    for url in (api_url, server_url):
        try:
            host = urllib.parse.urlsplit(url or "").hostname
        except ValueError:  # not a URL (`http://[x`): no host of ours
            continue
        if host:
            hosts.append(host)
            if host.startswith("api."):
                hosts.append(host.removeprefix("api."))
    return hosts


def rules_for(
    domains: Iterable[str], api_url: str | None, server_url: str | None, command: str = "holon"
) -> OutputRules:
    """The rules of a repository: the policy's `link_domains` and its own hosts."""
    return OutputRules.of([*domains, *own_hosts(api_url, server_url)], command)


# `&#58;` `&#x3a;` and the named references for the URL punctuation: `&` made `&amp;`.
_REFERENCE = re.compile(
    r"&(?=#[xX]?[0-9a-fA-F]{1,8};|(?:colon|sol|period|fullstop|NewLine|Tab|bsol|commat);)"
)
# GitHub mentions after any character but a letter or digit (`_@user_` is one).
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
# A Markdown image or link with a plain target: `![alt](url "title")`; bounded pieces.
_TITLE = r"(?:\s{1,8}(?:\"[^\"\n]{0,500}\"|'[^'\n]{0,500}'))?"
_TARGET = r"\(\s{0,8}<?(?P<url>[^\s()<>]{1,4000})>?" + _TITLE + r"\s{0,8}\)"
_IMAGE = re.compile(r"!\[(?P<text>[^\[\]\n]{0,1000})\]" + _TARGET)
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\[\]\n]{0,1000})\]" + _TARGET)
# Any URL: a scheme, its `:` maybe backslash-escaped (as a link target may have it), then what
# a browser reads as the slashes: `/` or `\`, escaped or not, none at all (`https:evil.com`),
# whitespace it drops; or `www.`; or `//` (`\\`) that starts no path segment. The host runs to
# the first character no host has.
_HOST = r"(?P<host>\[[0-9A-Fa-f:.]{2,64}\]|[^\s/\\?#<>\"'`()\[\]{}|^]{1,512})"
_URL = re.compile(
    r"(?i:(?P<scheme>\b[a-z][a-z0-9+.-]{0,31})\\?:(?P<slashes>[\s\\/]{0,16}))"
    + _HOST
    + r"|(?<![\w.:/\\-])(?P<www>(?i:www)\.)"
    + _HOST.replace("host", "whost")
    + r"|(?<![\w:/\\.])(?P<rel>[/\\]{2,8})"
    + _HOST.replace("host", "rhost")
)
_SCHEMES = frozenset({"http", "https", "ftp", "ftps", "ws", "wss"})


@cache
def _command_line(command: str) -> re.Pattern[str]:
    # The parser reads a command after at most 3 spaces; quote markers and list markers are
    # covered too so a quoted or listed line is safe in any renderer.
    return re.compile(
        r"(?im)^(?P<lead>[ \t>]{0,64}(?:(?:[-+*]|\d{1,9}[.)])[ \t]{1,8})?)/(?="
        + re.escape(command)
        + r"\b)"
    )


def host_of(authority: str) -> str:
    """The host of a URL's authority (`user@host:443` -> `host`), lowercased."""
    host = authority.rpartition("@")[2]
    if host.startswith("["):  # an IPv6 literal keeps its colons
        return host.partition("]")[0].lower() + "]"
    return host.partition(":")[0].lower()


def _external(url: str, rules: OutputRules) -> bool:
    """Whether a link target leaves the allow-list: an absolute or scheme-relative URL to
    another host. A relative target stays on GitHub."""
    found = _URL.match(url)
    if found is None:
        return ":" in url.split("/", 1)[0]  # `mailto:`, `data:`, `javascript:`: not ours
    host = found["host"] or found["whost"] or found["rhost"] or ""
    if found["www"]:
        host = "www." + host
    return not rules.allows(host_of(host))


def neutralized(text: str, rules: OutputRules = DEFAULT_RULES) -> str:
    """`text` with every command line, mention and outside link made harmless (see above).
    A pass is skipped when `text` lacks a character its pattern cannot match without (each
    `in` is a fast scan; a regex tries every position): the result is the same."""
    # The parser breaks lines at \r as well: one line ending, so `^` sees every line.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "&" in text:
        text = _REFERENCE.sub("&amp;", text)
    if "/" in text:
        text = _command_line(rules.command).sub(lambda m: m["lead"] + "/" + ZWSP, text)
    if "@" in text:
        text = _MENTION.sub("@" + ZWSP, text)
    if "](" in text:  # an image or a link: `[text](` with nothing between `]` and `(`
        text = _IMAGE.sub(lambda m: m["text"] if _external(m["url"], rules) else m[0], text)
        text = _LINK.sub(lambda m: m["text"] if _external(m["url"], rules) else m[0], text)
    return _masked(_URL.sub(lambda m: _url(m, rules), text))


# What each of `mask_secret_looking`'s patterns needs in a text to match at all: a token's
# prefix (case as written), a URL's `://` and `@`, or `token`/`bearer` in any case (`str.lower`
# maps the Kelvin sign, the one other character IGNORECASE reads as one of their letters, to k).
_SECRET_WORDS = ("token", "bearer")


def _masked(text: str) -> str:
    """`mask_secret_looking(text)`, skipped when none of its patterns can match."""
    if any(prefix in text for prefix in SECRET_PREFIXES) or ("://" in text and "@" in text):
        return mask_secret_looking(text)
    lowered = text.lower()
    if any(word in lowered for word in _SECRET_WORDS):
        return mask_secret_looking(text)
    return text


def _url(found: re.Match[str], rules: OutputRules) -> str:
    if found["scheme"] is not None:
        host = host_of(found["host"])
        between = found["slashes"]
        slashes = between.count("/") + between.count("\\")
        if found["scheme"].lower() not in _SCHEMES and (slashes < 2 or "." not in host):
            return found[0]  # `note:x`, `urn://x`, `c://`: no web link
        if slashes == 0 and "." not in host and not host.startswith("["):
            return found[0]  # `https: it is`: prose, no host
        if rules.allows(host):
            return found[0]
        return found["scheme"] + "[:]" + found["slashes"] + found["host"].replace(".", "[.]")
    if found["www"] is not None:
        host = "www." + found["whost"]
        if rules.allows(host_of(host)):
            return found[0]
        return "www[.]" + found["whost"].replace(".", "[.]")
    host = found["rhost"]
    if "." not in host or rules.allows(host_of(host)):
        return found[0]  # `//comment` in code: no host
    return "/[/]" + host.replace(".", "[.]")


__all__ = ["DEFAULT_RULES", "OutputRules", "host_of", "neutralized", "own_hosts", "rules_for"]
