"""Branch names: git's rules (`git check-ref-format --branch`), and Holon's stricter ones for
the branches it pushes to. Pure: no git is run; tests/test_refnames.py holds a table of names
against a real `git check-ref-format --branch`.

git refuses, for a branch `<name>` (checked as `refs/heads/<name>`): an empty name; `..`
anywhere; a control character, space, `~ ^ : ? * [` or `\\`; `@{`; a leading `-`; a leading or
trailing `/` and `//`; a trailing `.`; a component starting with `.` or ending with `.lock`;
the name `HEAD`. Holon also refuses `@` alone (git's name for HEAD in revisions, though git
lets a branch be called so), and, for a branch it pushes to, anything outside
`A-Z a-z 0-9 . _ / -` or longer than 200 characters: no shell metacharacter, no newline, no
look-alike letters.
"""

from __future__ import annotations

import re

MAX_BRANCH = 200
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
_PLAIN = re.compile(r"[A-Za-z0-9._/-]+")


def refname_problem(name: str) -> str | None:
    """Why git would not take `name` as a branch name; None when it would."""
    if not name:
        return "is empty"
    if name in ("@", "HEAD"):
        return f"may not be `{name}`"
    if _FORBIDDEN.search(name):
        return "may not hold a control character, a space or any of ``~ ^ : ? * [ \\``"
    if "@{" in name:
        return "may not hold `@{`"
    if ".." in name:
        return "may not hold `..`"
    if name.startswith("-"):
        return "may not start with `-`"
    if name.startswith("/") or name.endswith("/") or "//" in name:
        return "may not start or end with `/`, or hold `//`"
    if name.endswith("."):
        return "may not end with `.`"
    for part in name.split("/"):
        if part.startswith("."):
            return "no component may start with `.`"
        if part.endswith(".lock"):
            return "no component may end with `.lock`"
    return None


def branch_problem(name: str) -> str | None:
    """Why `name` is not a branch Holon pushes to (git's rules and Holon's); None when it is."""
    if not name or len(name) > MAX_BRANCH:
        return f"must have 1 to {MAX_BRANCH} characters"
    if not _PLAIN.fullmatch(name):
        return "may hold only letters, digits and `. _ / -`"
    return refname_problem(name)
