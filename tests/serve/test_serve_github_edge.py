"""The edge `holon serve` builds: ONE client for facts, effects and publishing, so write spacing
(and rate-limit state) is per token. Checked with PyGithub's own spacing on a fake clock: a write
through the facts (the merge) right after a write through the effects (a label) is deferred by
the spacing; with a client each, it would go at once."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import github.Requester
import pytest

from holon.controller.policy import load_policy
from holon.github.effects import Subject
from holon.github.labels import add_label
from holon.github.publish_handler import PublishHandler, publish_handlers
from holon.serve.edge import github_edge
from tests.github.merge_support import HOLON, REPO, TOKEN, holon_pull, pull_of

SPACING = 5.0


class FakeClock:
    """Stands in for PyGithub's `time` and `datetime` in its requester: its write spacing
    sleeps on this clock, which only moves when slept on."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def datetime(self) -> Any:
        clock = self

        class Now:
            @staticmethod
            def now(tz: Any = None) -> datetime:
                return datetime.fromtimestamp(clock.now, tz or UTC)

        return Now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(github.Requester, "time", SimpleNamespace(sleep=fake.sleep))
    monkeypatch.setattr(github.Requester, "datetime", fake.datetime())
    return fake


def _edge(server: Any) -> Any:
    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": server.url,
        "HOLON_GITHUB_LOGIN": HOLON,
        "HOLON_GITHUB_WRITE_SPACING": f"{SPACING:g}s",
    }
    settings = load_policy(None).settings
    return github_edge(
        env, REPO, clock=lambda: datetime.now(UTC), on_wait=lambda w: None, settings=settings
    )


def test_writes_through_facts_and_effects_share_one_spacing_clock(
    github_server: Any, clock: FakeClock
) -> None:
    repo = github_server.state.repos[REPO]
    pull = holon_pull(repo)
    edge = _edge(github_server)

    add_label(edge.scope, Subject(REPO, "issue", 1), "triage")  # effects: read, then a POST
    assert clock.slept == []  # the first write waits for nothing
    merged = edge.facts.access.merge(REPO, pull.number, sha=pull_of(pull).head_sha, method="merge")
    assert merged.merged
    # The merge (facts' side) waited the spacing after the label (effects' side): one clock.
    # Two clients would each have seen no earlier write and sent it back to back.
    assert clock.slept == [pytest.approx(SPACING)]
    assert github_server.operations() == [
        "issues/get",
        "issues/add-labels",
        "pulls/merge",
    ]


def test_publishing_goes_through_the_edge_client(github_server: Any, tmp_path: Path) -> None:
    edge = _edge(github_server)
    handlers = publish_handlers(
        edge.config, edge.repo, tmp_path, lambda: datetime.now(UTC), client=edge.client
    )
    handler = next(iter(handlers.values()))
    assert isinstance(handler, PublishHandler)
    assert handler.gh is edge.client
    assert edge.facts.access._requester is edge.client.requester
