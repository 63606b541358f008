"""Bots and Holon itself (docs/policy.md, "Guardrails"), with GitHub's real example payloads
edited: a bot never commands Holon unless `settings.allowed_bots` names its exact login (a
`[bot]` suffix, an OWNER association or GitHub's `type: Bot` prove nothing either way), and
what Holon wrote itself never asks it for work, nor earns a refusal comment (one more comment)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.controller.facts import PullFacts, StaticFacts
from holon.controller.guardrails import bot_allowed, looks_like_bot
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from tests.controller.conftest import REPO, decisions, make_controller
from tests.gateway.conftest import example

HOLON = "github-actions[bot]"
POLICY = "version: 1\nsettings: {{allowed_bots: {bots}}}\nrules:\n{rules}"
SOLVE_RULE = (
    "  - name: solve\n    on: github.issue_comment.created\n    command: solve\n"
    "    do: run_skill\n    skill: github-issue-solve\n"
)


def _comment(body: str, *, login: str, kind: str = "User", association: str = "OWNER") -> Any:
    payload = example("issue_comment", "created")
    payload["comment"].update(body=body, author_association=association)
    for user in (payload["comment"]["user"], payload["sender"]):
        user.update(login=login, type=kind)
    return normalize("issue_comment", payload, via="replay", received_at=datetime.now(UTC))


def _policy(*bots: str) -> str:
    return POLICY.format(bots=list(bots), rules=SOLVE_RULE)


def _only(ctl: Any) -> dict[str, Any]:
    (decision,) = decisions(ctl)
    return decision


@pytest.mark.parametrize(
    ("login", "kind"),
    [
        ("dependabot[bot]", "Bot"),
        ("renovate[bot]", "User"),  # an edited type: the login is still an app's
        ("my-app", "Bot"),  # an app GitHub calls Bot without the suffix in the login
        ("Dependabot[BOT]", "Bot"),
    ],
)
def test_a_bot_does_not_command_even_as_owner(tmp_path: Path, login: str, kind: str) -> None:
    ctl = make_controller(tmp_path, _policy())
    ctl.handle(_comment("/holon solve", login=login, kind=kind, association="OWNER"))
    decision = _only(ctl)
    assert [(r["guard"], r["reason"]) for r in decision["refused"]] == [
        ("authority", f"{login} is a bot, and settings.allowed_bots does not name it")
    ]
    assert [i["args"]["kind"] for i in decision["intents"]] == ["refusal"]


def test_an_allow_listed_bot_commands_by_its_exact_login(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path, _policy("renovate[bot]"))
    # Any association: the allow-list is the operator's word for it, not GitHub's.
    ctl.handle(_comment("/holon solve", login="Renovate[bot]", kind="Bot", association="NONE"))
    decision = _only(ctl)
    assert decision["refused"] == []
    assert decision["intents"][0]["args"]["skill"] == "github-issue-solve"


@pytest.mark.parametrize(
    "login", ["renovate", "evil-renovate[bot]", "renovate[bot]x", "renovate-bot[bot]"]
)
def test_the_allow_list_matches_whole_logins_only(tmp_path: Path, login: str) -> None:
    ctl = make_controller(tmp_path, _policy("renovate[bot]"), permissions={(REPO, login): "admin"})
    kind = "User" if login == "renovate" else "Bot"
    ctl.handle(_comment("/holon solve", login=login, kind=kind, association="MEMBER"))
    refused = _only(ctl)["refused"]
    if login == "renovate":  # a person with that name is no bot: their permission decides
        assert refused == []
    else:
        assert refused[0]["guard"] == "authority"


def test_bot_helpers() -> None:
    assert looks_like_bot("x[bot]")
    assert looks_like_bot("X[BOT]")
    assert looks_like_bot("x", "Bot")
    assert not looks_like_bot("bot")
    assert not looks_like_bot("robot-user", "User")
    assert bot_allowed("A[bot]", ["a[bot]"])
    assert not bot_allowed("a[bot]", ["a"])
    assert not bot_allowed("a[bot]", [])


@pytest.mark.parametrize("allowed", [(), (HOLON,)])
def test_holons_own_command_never_triggers_work(tmp_path: Path, allowed: tuple[str, ...]) -> None:
    ctl = make_controller(tmp_path, _policy(*allowed), holon_login=HOLON)
    # A comment Holon wrote quoting a command (a usage reply, an agent's summary).
    ctl.handle(_comment("/holon solve", login=HOLON, kind="Bot", association="NONE"))
    decision = _only(ctl)
    assert [r["guard"] for r in decision["refused"]] == ["self"]
    assert decision["intents"] == []  # no polite refusal either: it would be one more comment


def test_holon_as_a_person_with_write_access_is_still_holon(tmp_path: Path) -> None:
    # A personal access token: Holon writes as its owner, who may have admin access.
    ctl = make_controller(
        tmp_path,
        _policy(),
        holon_login="holon-bot-user",
        permissions={(REPO, "Holon-Bot-User"): "admin"},
    )
    ctl.handle(_comment("/holon solve", login="Holon-Bot-User", association="MEMBER"))
    assert [r["guard"] for r in _only(ctl)["refused"]] == ["self"]
    assert not ctl.ledger.inflight()


def _review(login: str, kind: str) -> EventEnvelope:
    payload = example("pull_request_review", "submitted")
    payload["review"]["state"] = "changes_requested"
    payload["pull_request"]["head"]["ref"] = "holon/issue-1"
    for user in (payload["review"]["user"], payload["sender"]):
        user.update(login=login, type=kind)
    return normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))


def test_holons_own_review_does_not_start_a_fix(tmp_path: Path) -> None:
    """The default policy fixes a Holon PR on a review requesting changes; Holon's own review
    (a github-review run) must not start a fix of its own PR, or the two would loop."""
    number = example("pull_request_review", "submitted")["pull_request"]["number"]
    pull = PullFacts(
        approved=False, stale=False, head_sha="a" * 40, head_ref="holon/issue-1", same_repo=True
    )
    by_holon = make_controller(tmp_path / "a", holon_login=HOLON, pulls={(REPO, number): pull})
    by_holon.handle(_review(HOLON, "Bot"))
    decision = _only(by_holon)
    assert decision["rule"] is not None
    assert [r["guard"] for r in decision["refused"]] == ["self"]
    by_person = make_controller(tmp_path / "b", holon_login=HOLON, pulls={(REPO, number): pull})
    by_person.handle(_review("Codertocat", "User"))
    assert _only(by_person)["refused"] == []


def test_static_facts_know_holon_by_login() -> None:
    facts = StaticFacts(holon_login="Holon[bot]")
    assert facts.is_holon("holon[bot]")
    assert not facts.is_holon("holon")
    assert not StaticFacts().is_holon("anyone")


def test_the_holon_label_added_by_holon_asks_nothing(tmp_path: Path) -> None:
    payload = example("issues", "labeled")
    payload["label"]["name"] = "holon"
    payload["sender"].update(login=HOLON, type="Bot")
    env = normalize("issues", payload, via="replay", received_at=datetime.now(UTC))
    ctl = make_controller(tmp_path, holon_login=HOLON)  # the built-in policy: label -> solve
    ctl.handle(env)
    decision = _only(ctl)
    assert decision["rule"] == "solve-issue-label"
    assert [r["guard"] for r in decision["refused"]] == ["self"]
    assert decision["intents"] == []
