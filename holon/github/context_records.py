"""GitHub's objects (an issue, a pull request, a comment, a check run...) as the small records a
run's context files hold. Pure: the event payload and the REST API send the same shapes, so both
sources of the context (`context_payload.py`, `context_api.py`) share these.

Every field is read defensively (a field of an unexpected type is absent, never a crash), and
every text of someone else's is `untrusted`: hidden characters and HTML comments removed, cut
to a bound. Nothing here escapes Markdown: the files are data for the agent, not for GitHub.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from holon import markdown

BODY_CHARS = 65_536  # GitHub's own limit on a comment or issue body
LINE_CHARS = 1_024  # a title, a branch, a file name
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def untrusted(text: object, limit: int = BODY_CHARS) -> str:
    """Someone else's text as data: hidden and control characters removed (bidi overrides,
    zero-width characters), HTML comments removed (text GitHub hides but a model would read),
    at most `limit` characters with the cut said."""
    if not isinstance(text, str):
        return ""
    cleaned = _COMMENT.sub("", markdown.clean(text))
    if len(cleaned) <= limit:
        return cleaned
    return cleaned[:limit] + f"\n[... {len(cleaned) - limit} more characters left out]"


def obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def login(user: Any) -> str | None:
    name = obj(user).get("login")
    return untrusted(name, LINE_CHARS) or None if isinstance(name, str) else None


def short(value: Any) -> str | None:
    return untrusted(value, LINE_CHARS) or None if isinstance(value, str) else None


@dataclass(frozen=True)
class Ref:
    ref: str | None
    sha: str | None
    repo: str | None

    def data(self) -> dict[str, Any]:
        return {"ref": self.ref, "sha": self.sha, "repo": self.repo}


@dataclass(frozen=True)
class Item:
    """The issue or pull request itself."""

    number: int
    title: str | None
    author: str | None
    state: str | None
    labels: tuple[str, ...]
    body: str | None
    url: str | None
    draft: bool | None = None
    merged: bool | None = None
    head: Ref | None = None
    base: Ref | None = None
    gaps: tuple[str, ...] = field(default=())  # what this record could not say, and why
    association: str | None = None  # GitHub's author_association of its author
    trust: str | None = None  # the collector's mark (holon/github/trust.py)


def _ref(value: Any) -> Ref | None:
    data = obj(value)
    if not data:
        return None
    return Ref(
        ref=short(data.get("ref")),
        sha=short(data.get("sha")),
        repo=short(obj(data.get("repo")).get("full_name")),
    )


def labels_of(value: Any) -> tuple[str, ...]:
    names = (
        label if isinstance(label, str) else obj(label).get("name")
        for label in (value if isinstance(value, list) else [])
    )
    return tuple(untrusted(n, LINE_CHARS) for n in names if isinstance(n, str))


def item(data: dict[str, Any], fallback_number: int) -> Item:
    """An issue or pull request object (a pull request carries `head` and `base`)."""
    draft, merged = data.get("draft"), data.get("merged")
    return Item(
        number=number(data.get("number")) or fallback_number,
        title=short(data.get("title")),
        author=login(data.get("user")),
        association=short(data.get("author_association")),
        state=short(data.get("state")),
        labels=labels_of(data.get("labels")),
        body=untrusted(data.get("body")) if isinstance(data.get("body"), str) else None,
        url=short(data.get("html_url")),
        draft=draft if isinstance(draft, bool) else None,
        merged=merged if isinstance(merged, bool) else None,
        head=_ref(data.get("head")),
        base=_ref(data.get("base")),
    )


# Comments, reviews and review comments: whether one is the trigger is the collector's to say
# (`trigger`, added last), since only it knows what asked for the run.
def comment(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": number(data.get("id")),
        "author": login(data.get("user")),
        "author_association": short(data.get("author_association")),
        "created_at": short(data.get("created_at") or data.get("submitted_at")),
        "body": untrusted(data.get("body")),
    }


def review(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": number(data.get("id")),
        "author": login(data.get("user")),
        "author_association": short(data.get("author_association")),
        "state": short(data.get("state")),
        "submitted_at": short(data.get("submitted_at")),
        "commit_id": short(data.get("commit_id")),
        "body": untrusted(data.get("body")),
    }


def review_comment(data: dict[str, Any]) -> dict[str, Any]:
    line = data.get("line") if data.get("line") is not None else data.get("original_line")
    return {
        **comment(data),
        "path": short(data.get("path")),
        "line": line if isinstance(line, int) else None,
        "side": short(data.get("side")),
        "commit_id": short(data.get("commit_id")),
        "in_reply_to": number(data.get("in_reply_to_id")),
        "review_id": number(data.get("pull_request_review_id")),
        "diff_hunk": untrusted(data.get("diff_hunk"), 8_192),
    }


def threads(comments: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Review comments grouped into threads by `in_reply_to` (GitHub replies to the thread's
    first comment), in the order their first comments came. Whether a thread is resolved is
    GraphQL-only: `resolved` is None (unknown)."""
    found: dict[int, dict[str, Any]] = {}
    orphans: list[dict[str, Any]] = []
    for entry in comments:
        root = entry.get("in_reply_to") or entry.get("id")
        if not isinstance(root, int):
            orphans.append({"id": None, "path": entry.get("path"), "comments": [entry]})
            continue
        thread = found.get(root)
        if thread is None:
            thread = found[root] = {
                "id": root,
                "path": entry.get("path"),
                "line": entry.get("line"),
                "resolved": None,
                "comments": [],
            }
        thread["comments"].append(entry)
    return [*found.values(), *orphans]


def changed_file(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": short(data.get("filename")),
        "previous_path": short(data.get("previous_filename")),
        "status": short(data.get("status")),
        "additions": data.get("additions") if isinstance(data.get("additions"), int) else None,
        "deletions": data.get("deletions") if isinstance(data.get("deletions"), int) else None,
        "changes": data.get("changes") if isinstance(data.get("changes"), int) else None,
    }


def commit(data: dict[str, Any]) -> dict[str, Any]:
    inner = obj(data.get("commit"))
    author = obj(inner.get("author"))
    return {
        "sha": short(data.get("sha")),
        "author": login(data.get("author")) or short(author.get("name")),
        "date": short(author.get("date")),
        "message": untrusted(inner.get("message"), 16_384),
    }


def check_run(data: dict[str, Any]) -> dict[str, Any]:
    output = obj(data.get("output"))
    app = obj(data.get("app"))
    return {
        "id": number(data.get("id")),
        "name": short(data.get("name")),
        "app": short(app.get("slug")),
        "status": short(data.get("status")),
        "conclusion": short(data.get("conclusion")),
        "head_sha": short(data.get("head_sha")),
        "details_url": short(data.get("details_url")),
        "title": short(output.get("title")),
        "summary": untrusted(output.get("summary"), 8_192) or None,
    }


def check_suite(data: dict[str, Any]) -> dict[str, Any]:
    app = obj(data.get("app"))
    return {
        "id": number(data.get("id")),
        "name": f"{short(app.get('slug')) or 'app'} check suite",
        "app": short(app.get("slug")),
        "status": short(data.get("status")),
        "conclusion": short(data.get("conclusion")),
        "head_sha": short(data.get("head_sha")),
        "details_url": None,
        "title": None,
        "summary": None,
    }


FAILING = frozenset({"failure", "timed_out", "startup_failure"})
ACTIONS_APP = "github-actions"


def failing_actions_jobs(checks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check runs that failed and are GitHub Actions jobs (a job's id is its check run's)."""
    return [c for c in checks if c.get("conclusion") in FAILING and c.get("app") == ACTIONS_APP]
