"""Scopes for the effect tests (Holon's client on a fake GitHub, the handle on its repository)
and handoffs of the documented closure scenarios."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from holon.closure.derive import derive_closure
from holon.closure.evidence import parse_evidence
from holon.closure.handoff import Handoff, HandoffContext, build_handoff
from holon.closure.mapping import report_for
from holon.github.client import GitHubConfig, make_client
from holon.github.effects import Scope, Subject
from holon.github.pygithub_repo import open_repo

TOKEN = "ghs_" + "f" * 36  # the github_server fixture's
REPO = "octocat/Hello-World"
HOLON = "github-actions[bot]"  # who the loopback GitHub says wrote what Holon writes
ISSUE = Subject(REPO, "issue", 1)
PULL = Subject(REPO, "pull_request", 2)
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "closure"
RUN_URL = "https://github.com/octocat/Hello-World/actions/runs/42"
SKILL = "github-issue-solve"


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
        handle = open_repo(client, settings.pop("repo"))
        yield Scope(handle, **settings)
    finally:
        client.close()


def handoff(name: str, **context: Any) -> Handoff:
    """The handoff of docs/examples/closure/`name` on issue 1 (`context` overrides)."""
    closure = derive_closure(parse_evidence((EXAMPLES / f"{name}.evidence.json").read_bytes()))
    ctx = HandoffContext.model_validate(
        {"subject": {"kind": "issue", "id": "1"}, "skill": SKILL, **context}
    )
    return build_handoff(closure, report_for(closure), ctx)
