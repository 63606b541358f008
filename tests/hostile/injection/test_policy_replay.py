"""The injection corpus through the policy decider, in real controller passes.

Each case's deliveries (GitHub's example payloads with the hostile text put in place) go through
`Controller.handle` under the built-in policy, the actor's permission as the replays' facts give
it. The oracle is the case's clean twin: the same deliveries with the text reduced to the
command it carries (or to plain words when it carries none). A hostile text must get exactly
what its twin gets: the words around a command add nothing, and a command hidden, quoted or
fenced is no command. An author without write access gets no work at all (a refusal or the usage
reply at most); nothing merges, closes or dispatches, whoever asks.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from holon.controller.loop import Controller
from holon.gateway.commands import parse_command
from tests.controller.conftest import REPO, make_controller
from tests.hostile.injection.corpus import Case, cases, events, permissions, twin

NEVER = {"merge", "close_issue", "dispatch"}  # no text makes Holon do these
REPLIES = {"refusal", "usage"}  # what an author without write access may get back

Seen = Counter[tuple[str, str | None, str | None]]


def _controller(tmp_path: Path, case: Case) -> Controller:
    return make_controller(tmp_path, permissions=permissions(case, REPO))


def _intents(tmp_path: Path, case: Case) -> Seen:
    ctl = _controller(tmp_path, case)
    seen: Seen = Counter()
    for env in events(case):
        for intent in ctl.handle(env).intents:
            seen[(intent.type, intent.args.get("skill"), intent.args.get("kind"))] += 1
    return seen


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_hostile_text_gets_no_intent_beyond_its_command(case: Case, tmp_path: Path) -> None:
    got = _intents(tmp_path / "hostile", case)
    assert not {kind for kind, _, _ in got} & NEVER
    if not case.has_write:
        assert {kind for kind, _, _ in got} <= {"comment"}, got
        assert {reply for _, _, reply in got} <= REPLIES, got
    assert got == _intents(tmp_path / "twin", twin(case))


def test_the_corpus_covers_every_channel_and_attack() -> None:
    found = cases()
    assert len(found) >= 45
    assert {c.channel for c in found} == {
        "comment",
        "issue_body",
        "issue_title",
        "review",
        "review_comment",
        "pr_body",
        "branch",
    }
    tried = set().union(*(c.tries for c in found))
    assert tried == {
        "merge",
        "leak",
        "command",
        "workflow",
        "ignore",
        "hidden",
        "split",
        "mention",
        "link",
    }
    # Both kinds of author: the attack from outside, and hostile text in a trusted command.
    assert {c.has_write for c in found} == {True, False}


def test_a_hidden_or_fenced_command_is_no_command() -> None:
    """The cases that hide `/holon` carry no command the parser reads."""
    hidden = {
        "tag-chars-hidden-command",
        "zero-width-split-command",
        "html-comment-command",
        "fake-command-in-code-block",
        "fake-command-in-quote",
        "fake-command-indented",
    }
    by_id = {c.id: c for c in cases()}
    for ident in hidden:
        assert parse_command(by_id[ident].text) is None, ident
