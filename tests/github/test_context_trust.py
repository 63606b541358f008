"""Author trust in a run's context: every comment, review and review comment says who wrote it,
their association and whether they can write; `exclude` leaves out the rest (the trigger
kept) and the manifest says how many; the diff shows its hidden characters."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from holon.github.client import GitHubConfig, make_client
from holon.github.context import collect_event, visible_hidden
from holon.github.context_api import ApiReader
from holon.github.trust import NO_WRITE, TRUSTED, UNCONFIRMED, trust_of
from tests.gateway.conftest import example
from tests.github.test_context_api import API, REPO, TOKEN, body_of
from tests.support.github_fake import GitHubFake


@pytest.mark.parametrize(
    ("association", "permission", "mark"),
    [
        ("OWNER", None, TRUSTED),
        ("MEMBER", None, UNCONFIRMED),
        ("COLLABORATOR", None, UNCONFIRMED),
        ("MEMBER", "write", TRUSTED),
        ("COLLABORATOR", "maintain", TRUSTED),
        ("MEMBER", "read", NO_WRITE),
        ("COLLABORATOR", "triage", NO_WRITE),
        ("NONE", None, NO_WRITE),
        ("CONTRIBUTOR", None, NO_WRITE),
        ("FIRST_TIME_CONTRIBUTOR", None, NO_WRITE),
        (None, None, UNCONFIRMED),
    ],
)
def test_the_trust_mark(association: str | None, permission: str | None, mark: str) -> None:
    assert trust_of(association, permission) == mark


def test_the_payloads_trigger_and_item_carry_association_and_trust(tmp_path: Path) -> None:
    payload = example("issue_comment", "created")
    payload["comment"]["author_association"] = "NONE"
    payload["issue"]["author_association"] = "OWNER"
    collect_event("issue_comment", payload, tmp_path / "c", untrusted="exclude")
    (comment,) = json.loads((tmp_path / "c" / "comments.json").read_text())
    # The trigger is kept even under exclude: the controller already allowed its author.
    assert (comment["author_association"], comment["trust"]) == ("NONE", NO_WRITE)
    issue = (tmp_path / "c" / "issue.md").read_text()
    assert f"(OWNER); {TRUSTED}" in issue


def _comments(associations: list[str], login: str = "octocat") -> list[dict[str, Any]]:
    (model,) = body_of("issues/list-comments")
    found = []
    for ident, association in enumerate(associations, start=1):
        item = copy.deepcopy(model)
        item.update(id=ident, body=f"comment {ident}", author_association=association)
        item["user"]["login"] = f"{login}{ident}"
        found.append(item)
    return found


def _reader(permissions: bool) -> ApiReader:
    config = GitHubConfig.model_validate({"api_url": API, "token": TOKEN, "write_spacing": 0.0})
    client = make_client(config, sleep=lambda seconds: None)
    return ApiReader(client, REPO, read_permissions=permissions)


@pytest.mark.parametrize("mode", ["mark", "exclude"])
def test_untrusted_comments_are_marked_or_left_out(
    github_fake: GitHubFake, tmp_path: Path, mode: str
) -> None:
    payload = example("issue_comment", "created")
    issue = body_of("issues/get")
    issue["author_association"] = "OWNER"
    github_fake.on("issues/get", body=issue)
    github_fake.on("issues/list-comments", body=_comments(["OWNER", "NONE", "MEMBER", "MEMBER"]))
    # Read in the comments' order: the first member can write, the second only read.
    github_fake.on("repos/get-collaborator-permission-level", body={"permission": "write"})
    github_fake.on("repos/get-collaborator-permission-level", body={"permission": "read"})
    dest = tmp_path / "c"
    collect_event(
        "issue_comment",
        payload,
        dest,
        reader=_reader(permissions=True),
        untrusted=mode,  # type: ignore[arg-type]
    )
    found = {c["id"]: c for c in json.loads((dest / "comments.json").read_text())}
    manifest = json.loads((dest / "manifest.json").read_text())
    missing = {m["name"]: m["reason"] for m in manifest["missing"]}
    trigger = payload["comment"]["id"]
    assert found[1]["trust"] == TRUSTED
    assert found[3]["trust"] == TRUSTED  # a member the permission shows can write
    assert found[trigger]["trigger"] is True
    if mode == "mark":
        assert found[2]["trust"] == NO_WRITE
        assert found[4]["trust"] == NO_WRITE  # a member with read access only
        assert "comments (untrusted)" not in missing
    else:
        assert 2 not in found
        assert 4 not in found
        assert missing["comments (untrusted)"].startswith("2 by authors without confirmed write")
    assert github_fake.count("repos/get-collaborator-permission-level") == 2  # one per member


def test_without_permission_reads_a_member_is_unconfirmed(
    github_fake: GitHubFake, tmp_path: Path
) -> None:
    payload = example("issue_comment", "created")
    github_fake.on("issues/get")  # by a COLLABORATOR: unconfirmed too
    github_fake.on("issues/list-comments", body=_comments(["MEMBER"]))
    collect_event("issue_comment", payload, tmp_path / "c", reader=_reader(permissions=False))
    found = json.loads((tmp_path / "c" / "comments.json").read_text())
    assert found[0]["trust"] == UNCONFIRMED
    assert github_fake.count("repos/get-collaborator-permission-level") == 0


def test_the_diffs_hidden_characters_are_shown() -> None:
    patch = "+x = 1  # \u202eevil\u202c\n+\U000e0041\u200b\n".encode()
    shown = visible_hidden(patch).decode()
    assert "<U+202E>evil<U+202C>" in shown
    assert "<U+E0041><U+200B>" in shown
    assert visible_hidden(b"plain\n") == b"plain\n"
