"""The words publishing writes: the commit message, the pull request's title and body.

The issue's title and the agent's summary are untrusted: the title is made one line (hidden
and control characters removed, whitespace collapsed, cut) and its issue references are
broken (`#7` becomes `# 7`, `GH-7` `GH- 7`, `://` `: //`): a title reading "fixes #1" would
otherwise close issue 1 when the commit, or a squash of the PR, lands. The summary goes into the
body only inside a code fence it cannot break out of (`markdown.block`), so it can neither
mention anyone, close another issue with a keyword, nor carry a marker of its own.

The commit ends with trailers Holon writes itself: `Holon-Run: <run id>`, which lets a later
attempt recognize its own commit on the branch, and, when the policy says so and the actor is
known, `Co-authored-by:` the person who asked, with their GitHub noreply address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from holon.markdown import block, clean, code

TITLE_LIMIT = 72
PR_TITLE_LIMIT = 256
BODY_LIMIT = 60_000  # GitHub takes 65,536 characters
RUN_TRAILER = "Holon-Run"
_REFERENCE = re.compile(r"(?i)(#|\bgh-)(?=\d)")
_VERBS = {"github-issue-solve": "Fix", "github-pr-fix": "Address feedback on"}


@dataclass(frozen=True)
class Actor:
    """Who asked for the run: a GitHub login and, when the event gave it, the account id."""

    login: str
    id: int | None = None


def one_line(text: str, limit: int) -> str:
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def unlinked(text: str) -> str:
    """Untrusted text with no issue reference GitHub would act on."""
    return _REFERENCE.sub(r"\1 ", text).replace("://", ": //")


def title(
    skill: str, number: int, subject_title: str, closes: bool = True, limit: int = TITLE_LIMIT
) -> str:
    """`Fix #12: Crash on start`: the skill's verb, the subject, its title made one line.
    Without `closes`, no closing keyword: `Fix #12` closes the issue when the commit lands."""
    verb = _VERBS.get(skill, skill)
    verb = "Work on" if verb == "Fix" and not closes else verb
    head = f"{verb} #{number}"
    rest = one_line(unlinked(subject_title), limit)
    return one_line(f"{head}: {rest}", limit) if rest else head


def noreply(actor: Actor) -> str | None:
    """`<id>+<login>@users.noreply.github.com`, GitHub's address for an account; None
    without the id (the address without it is not tied to the account)."""
    return None if actor.id is None else f"{actor.id}+{actor.login}@users.noreply.github.com"


def commit_message(
    skill: str,
    kind: str,
    number: int,
    subject_title: str,
    run_id: str,
    co_author: Actor | None,
    closes: bool = True,
) -> str:
    lines = [
        title(skill, number, subject_title, closes),
        "",
        f"Made by Holon's {skill} skill for {kind.replace('_', ' ')} #{number}.",
        "",
        f"{RUN_TRAILER}: {run_id}",
    ]
    address = noreply(co_author) if co_author else None
    if co_author and address:
        lines.append(f"Co-authored-by: {co_author.login} <{address}>")
    return "\n".join(lines) + "\n"


def is_run_commit(message: str, run_id: str) -> bool:
    """Whether a commit message carries this run's trailer (in its last paragraph)."""
    last = message.rstrip("\n").rsplit("\n\n", 1)[-1]
    return f"{RUN_TRAILER}: {run_id}" in last.splitlines()


def pr_body(marker: str, number: int, link: str, skill: str, run_id: str, summary: str) -> str:
    keyword = "Fixes" if link == "fixes" else "Refs"
    head = [
        marker,
        "",
        f"{keyword} #{number}",
        "",
        f"Holon's {code(skill)} skill made this change in run {code(run_id)}. It is a draft: "
        "review it before it is merged.",
    ]
    text = "\n".join(head)
    if summary.strip():
        room = BODY_LIMIT - len(text) - 200
        kept = summary if len(summary) <= room else summary[:room] + "\n[cut]"
        text += (
            "\n\n<details><summary>The agent's summary</summary>\n\n"
            f"{block(kept, 'markdown')}\n\n</details>"
        )
    return text + "\n"
