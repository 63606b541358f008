"""GitHub logins: compared as GitHub compares them (without case), and Holon's own, which
recognizing what it wrote before needs."""

from __future__ import annotations

from holon.github.errors import PublishError


def require_login(login: str | None, what: str) -> str:
    """`login`; PublishError("no-login") when it is unknown: without it Holon's earlier `what`
    cannot be found again, and posting anyway would post it a second time on every retry."""
    if login is None:
        raise PublishError(
            "no-login",
            f"Holon's login is unknown, so its earlier {what} cannot be found again and posting "
            "could repeat it: set HOLON_GITHUB_LOGIN",
        )
    return login


def same_login(a: str | None, b: str | None) -> bool:
    """Whether `a` and `b` are one account: GitHub's logins ignore case (`Github-Actions[bot]`
    is `github-actions[bot]`). An unknown login (None) is nobody's, not even another None's."""
    return a is not None and b is not None and a.casefold() == b.casefold()
