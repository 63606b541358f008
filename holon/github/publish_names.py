"""What publishing accepts as a path, a branch, a repository and a run id (docs/github.md,
"Publishing"). Every check refuses; none repairs: a name that needs repair came from someone
who should not be choosing it.

Paths come from the agent's `diff.patch`, so they are hostile until checked: absolute paths,
`.` and `..` components, empty components, `.git` in any spelling git or a checkout on another
system would honour (`.GIT`, `.git.`, `git~1`), backslashes (a separator on Windows checkouts),
control characters and text that is not UTF-8 are all refused. Branch names are held to git's
`check-ref-format` rules and, stricter, to the alphabet `A-Z a-z 0-9 . _ / -`: no space, no
shell metacharacter, no newline, nothing a later tool could read as an option
(`holon.refnames.branch_problem`, shared with the policy's check of `branch_template`).
"""

from __future__ import annotations

import re

# The host skill that publishes, and the skills whose runs it publishes (here, not in
# `publish_handler.py`, so the serve's hooks and routing can name them without importing it).
SKILL = "github-publish"
PUBLISHED = ("github-issue-solve", "github-pr-fix", "github-review")
WORKFLOWS = ".github/workflows/"
MAX_PATH = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHORT_NAME = re.compile(r"git~\d+")  # the NTFS 8.3 alias of `.git`
_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
SHA = re.compile(r"[0-9a-f]{40}")


def path_problem(path: str) -> str | None:
    """Why `path` (as the patch names it, prefix stripped) may not be published; None if fine."""
    if not path:
        return "an empty path"
    if len(path) > MAX_PATH:
        return f"a path longer than {MAX_PATH} characters"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "a path that is not UTF-8"
    if _CONTROL.search(path):
        return "a path with a control character"
    if path.startswith("/"):
        return "an absolute path"
    if "\\" in path:
        return "a path with a backslash"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return "a path with an empty, `.` or `..` component"
        folded = part.lower().rstrip(". ")
        if folded == ".git" or _SHORT_NAME.fullmatch(folded):
            return "a path inside `.git`"
    return None


def is_workflow(path: str) -> bool:
    """A GitHub Actions workflow file (any case: a refusal costs nothing when it is not one)."""
    return path.lower().startswith(WORKFLOWS)


def branch_for(template: str, kind: str, number: int) -> str:
    """The branch for a subject, from a template such as `holon/{kind}-{number}`. Plain
    substitution, not `str.format`: a template never reaches attributes."""
    return template.replace("{kind}", kind).replace("{number}", str(number))


def valid_repo(full_name: str) -> bool:
    return bool(_REPO.fullmatch(full_name)) and full_name.split("/")[1] not in (".", "..")


def valid_run_id(run_id: str) -> bool:
    return bool(_RUN_ID.fullmatch(run_id))


_LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}(?:\[bot\])?")
_SKILL = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


def valid_login(login: str) -> bool:
    return bool(_LOGIN.fullmatch(login))


def valid_skill(name: str) -> bool:
    return bool(_SKILL.fullmatch(name))
