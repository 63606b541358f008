"""The shipped corpus: it loads, every scenario builds, it covers what the controller must get
right, and its event payloads are GitHub's own examples, trimmed, normalizing as the originals."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from holon.eval.events import _shipped, event_names, github_event
from holon.eval.scenario import Scenario, builtin_dir, load_scenarios
from holon.eval.world import prepare
from holon.gateway.github import normalize
from tests.gateway.conftest import example

CORPUS = load_scenarios(builtin_dir())


def test_the_corpus_is_large_and_named_uniquely() -> None:
    assert len(CORPUS) >= 24
    assert len({s.name for s in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("scenario", CORPUS, ids=lambda s: s.name)
def test_every_scenario_builds_its_world(scenario: Scenario) -> None:
    world = prepare(scenario)
    assert world.envelope.type.startswith("github.")
    assert world.subject
    assert world.now > world.envelope.at


def _commands() -> set[str]:
    return {w.envelope.command.name for w in map(prepare, CORPUS) if w.envelope.command is not None}


def test_the_corpus_covers_every_command_and_the_hard_cases() -> None:
    assert {"solve", "review", "fix", "stop", "status", "help", "unknown"} <= _commands()
    worlds = [prepare(s) for s in CORPUS]
    actors = [w.envelope.actor for w in worlds if w.envelope.actor is not None]
    assert any(a.authority == "none" and not a.is_bot for a in actors)  # outsiders
    assert any(a.is_bot for a in actors)  # bots, Holon's own among them
    types = Counter(w.envelope.type for w in worlds)
    for needed in (
        "github.issue_comment.created",
        "github.issues.labeled",
        "github.pull_request_review.submitted",
        "github.check_suite.completed",
        "github.check_run.completed",
        "github.workflow_dispatch",
        "github.pull_request.opened",
    ):
        assert types[needed], needed
    settings = [s.settings for s in CORPUS]
    assert any(s.get("allow_merge") for s in settings)
    assert any(
        s.expect.forbidden and "merge" in {p.type for p in s.expect.forbidden} for s in CORPUS
    )
    states = [s.state for s in CORPUS]
    assert any(st.waits for st in states)
    assert any(st.reactivation for st in states)
    assert any(st.memory for st in states)
    assert any(st.paused for st in states)
    assert any(st.seen for st in states)
    assert sum(s.expect.policy == "wrong" for s in CORPUS) <= 3  # the policy's known limits


def _subtree(part: Any, whole: Any, where: str = "") -> None:
    if isinstance(part, dict):
        assert isinstance(whole, dict), where
        for key, value in part.items():
            assert key in whole, f"{where}.{key}"
            _subtree(value, whole[key], f"{where}.{key}")
    elif isinstance(part, list):
        assert isinstance(whole, list), where
        assert len(part) == len(whole), where
        for index, (a, b) in enumerate(zip(part, whole, strict=True)):
            _subtree(a, b, f"{where}[{index}]")
    else:
        assert part == whole, where


@pytest.mark.parametrize("name", event_names())
def test_each_shipped_event_is_its_octokit_example_trimmed(name: str) -> None:
    event, _, action = name.partition(".")
    original = example(event, action or None)
    trimmed = _shipped(name)
    _subtree(trimmed, original)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    small, full = (
        normalize(github_event(name), p, via="webhook", received_at=at, delivery="d")
        for p in (dict(trimmed), original)
    )
    assert small.model_dump(exclude={"payload"}) == full.model_dump(exclude={"payload"})


def test_the_events_note_their_source_and_licence() -> None:
    readme = (builtin_dir().parent / "events" / "README.md").read_text()
    assert "@octokit/webhooks-examples" in readme
    assert "MIT" in readme
