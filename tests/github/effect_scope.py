"""Scopes for the effect tests: Holon's client on a fake GitHub, the handle on its repository."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from holon.github.client import GitHubConfig, make_client
from holon.github.effects import Scope, Subject
from holon.github.pygithub_repo import PyGithubRepo

TOKEN = "ghs_" + "f" * 36  # the github_server fixture's
REPO = "octocat/Hello-World"
HOLON = "github-actions[bot]"  # who the loopback GitHub says wrote what Holon writes
ISSUE = Subject(REPO, "issue", 1)
PULL = Subject(REPO, "pull_request", 2)


@contextmanager
def scope_on(url: str, **options: Any) -> Iterator[Scope]:
    """A scope on `url` (the event in `REPO`, Holon writing as `HOLON`), its client closed
    after; `options` replace `repo`, `event_repo`, `login`, `workflow`."""
    settings = {"repo": REPO, "event_repo": REPO, "login": HOLON, "workflow": "holon", **options}
    client = make_client(
        GitHubConfig(api_url=url, token=TOKEN, write_spacing=0.0),  # type: ignore[arg-type]
        sleep=lambda seconds: None,
    )
    try:
        handle = PyGithubRepo(client, settings.pop("repo"))
        yield Scope(handle, **settings)
    finally:
        client.close()
