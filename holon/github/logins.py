"""Holon's own login, as publishing needs it to recognize what it wrote before."""

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
