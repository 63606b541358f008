"""The GitHub connector against GitHub's real payload examples."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest

from holon.gateway.github import PRECISE, PayloadError, authority_of, normalize
from tests.gateway.conftest import example, examples, schema

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)

# The table of docs/events.md, written out again by hand: (event, action) -> subject kind and the
# payload paths of the identity fields, in key order ("=action" is the action itself).
TABLE: dict[tuple[str, str | None], tuple[str, list[str]]] = {
    ("issues", "opened"): ("issue", ["issue.number", "=action", "issue.updated_at"]),
    ("issues", "reopened"): ("issue", ["issue.number", "=action", "issue.updated_at"]),
    ("issues", "closed"): ("issue", ["issue.number", "=action", "issue.updated_at"]),
    ("issues", "edited"): ("issue", ["issue.number", "=action", "issue.updated_at"]),
    ("issues", "labeled"): ("issue", ["issue.number", "=action", "label.name", "issue.updated_at"]),
    ("issues", "unlabeled"): (
        "issue",
        ["issue.number", "=action", "label.name", "issue.updated_at"],
    ),
    ("issue_comment", "created"): ("issue", ["comment.id"]),
    ("pull_request", "opened"): (
        "pull_request",
        ["pull_request.number", "=action", "pull_request.head.sha"],
    ),
    ("pull_request", "reopened"): (
        "pull_request",
        ["pull_request.number", "=action", "pull_request.head.sha"],
    ),
    ("pull_request", "ready_for_review"): (
        "pull_request",
        ["pull_request.number", "=action", "pull_request.head.sha"],
    ),
    ("pull_request", "closed"): (
        "pull_request",
        ["pull_request.number", "=action", "pull_request.head.sha"],
    ),
    ("pull_request", "synchronize"): ("pull_request", ["pull_request.number", "after"]),
    ("pull_request", "labeled"): (
        "pull_request",
        ["pull_request.number", "=action", "label.name", "pull_request.updated_at"],
    ),
    ("pull_request", "unlabeled"): (
        "pull_request",
        ["pull_request.number", "=action", "label.name", "pull_request.updated_at"],
    ),
    ("pull_request_review", "submitted"): ("pull_request", ["review.id"]),
    ("pull_request_review_comment", "created"): ("pull_request", ["comment.id"]),
    ("check_suite", "completed"): (
        "check_suite",
        [
            "check_suite.id",
            "check_suite.head_sha",
            "check_suite.conclusion",
            "check_suite.updated_at",
        ],
    ),
    ("check_run", "completed"): (
        "check_run",
        ["check_run.id", "check_run.head_sha", "check_run.conclusion", "check_run.completed_at"],
    ),
    ("workflow_run", "completed"): (
        "workflow_run",
        ["workflow_run.id", "workflow_run.run_attempt", "workflow_run.conclusion"],
    ),
    ("push", None): ("ref", ["ref", "after"]),
}
SUBJECT_ID = {
    "issue": "issue.number",
    "pull_request": "pull_request.number",
    "check_suite": "check_suite.id",
    "check_run": "check_run.id",
    "workflow_run": "workflow_run.id",
    "ref": "ref",
}


def _get(payload: dict[str, Any], path: str) -> Any:
    value: Any = payload
    for part in path.split("."):
        value = value[part]
    return value


def _norm(event: str, payload: dict[str, Any], **kw: Any) -> Any:
    return normalize(event, payload, via="webhook", received_at=NOW, **kw)


def test_table_matches_the_connector() -> None:
    assert set(TABLE) == set(PRECISE)


@pytest.mark.parametrize(("event", "action"), sorted(TABLE, key=str))
def test_precise_rows(event: str, action: str | None) -> None:
    payload = example(event, action)
    env = _norm(event, payload)
    kind, paths = TABLE[(event, action)]
    if event == "issue_comment" and "pull_request" in payload["issue"]:
        kind = "pull_request"
    assert env.type == f"github.{event}" + (f".{action}" if action else "")
    assert env.source == "github"
    assert env.subject.kind == kind
    id_path = SUBJECT_ID.get(kind, "issue.number" if event == "issue_comment" else "")
    assert env.subject.id == str(
        _get(payload, id_path if event != "issue_comment" else "issue.number")
    )
    fields = [action if p == "=action" else str(_get(payload, p) or "") for p in paths]
    name = f"{event}.{action}" if action else event
    assert env.dedupe_key == f"github:{payload['repository']['full_name']}:{name}:" + ":".join(
        fields
    )
    assert env.scope.repo == payload["repository"]["full_name"]
    assert env.payload == payload
    assert env.id.startswith("evt_")


def _schema_requires(node: dict[str, Any], path: list[str], root: dict[str, Any]) -> bool:
    """Whether a payload valid against `node` must contain `path` (following $ref and allOf)."""
    if "$ref" in node:
        node = root["definitions"][node["$ref"].split("/")[-1]]
    if "allOf" in node:
        return any(_schema_requires(part, path, root) for part in node["allOf"])
    if not path:
        return True
    head, rest = path[0], path[1:]
    if head not in node.get("required", []) or head not in node.get("properties", {}):
        return False
    return _schema_requires(node["properties"][head], rest, root)


@pytest.mark.parametrize(("event", "action"), sorted(TABLE, key=str))
def test_required_reads_are_required_by_githubs_schema(event: str, action: str | None) -> None:
    """Every field a precise row cannot do without is one GitHub's schema guarantees, so any
    payload valid against schema.json normalizes; fields the schema may omit are read as
    optional (conclusion, timestamps of checks, run_attempt)."""
    root = schema()
    definition = root["definitions"][f"{event}${action}" if action else f"{event}$event"]
    kind, paths = TABLE[(event, action)]
    optional = {
        "check_suite.conclusion",
        "check_suite.updated_at",
        "check_run.conclusion",
        "check_run.completed_at",
        "workflow_run.run_attempt",
        "workflow_run.conclusion",
    }
    if event == "issues":
        optional.add("label.name")
    needed = [p for p in paths if p != "=action" and p not in optional]
    needed.append(
        SUBJECT_ID.get(kind, "issue.number") if event != "issue_comment" else "issue.number"
    )
    for path in needed:
        assert _schema_requires(definition, path.split("."), root), f"{event}: {path}"


def test_examples_valid_against_the_schema_normalize() -> None:
    root = schema()
    validated = 0
    for event, action in TABLE:
        for payload in examples()[event]:
            if action is not None and payload.get("action") != action:
                continue
            name = f"{event}${action}" if action else f"{event}$event"
            errors = list(
                jsonschema.Draft7Validator({"$ref": f"#/definitions/{name}", **root}).iter_errors(
                    payload
                )
            )
            if not errors:
                validated += 1
                assert _norm(event, payload).dedupe_key
    assert validated >= 10


def test_every_example_normalizes() -> None:
    count = 0
    for event, payloads in examples().items():
        for payload in payloads:
            env = _norm(event, payload, delivery="d-1")
            assert env.type.startswith(f"github.{event}")
            assert env.dedupe_key
            count += 1
    assert count > 300


def test_check_suite_carries_head_sha_and_pull_requests() -> None:
    env = _norm("check_suite", example("check_suite", "completed"))
    payload = example("check_suite", "completed")
    assert env.subject.head_sha == payload["check_suite"]["head_sha"]
    assert env.subject.pull_requests == [
        pr["number"] for pr in payload["check_suite"]["pull_requests"]
    ]


def test_keys_equal_exactly_when_identity_is() -> None:
    payload = example("issues", "labeled")
    first = _norm("issues", payload, delivery="a")
    # A redelivery (new delivery id, same payload) is the same fact.
    assert _norm("issues", payload, delivery="b").dedupe_key == first.dedupe_key
    # Removed and re-added later: the issue's updated_at moved, so a new key.
    again = example("issues", "labeled")
    again["issue"]["updated_at"] = "2031-01-01T00:00:00Z"
    assert _norm("issues", again).dedupe_key != first.dedupe_key
    # A different label at the same instant is a different fact too.
    other = example("issues", "labeled")
    other["label"]["name"] = "another"
    assert _norm("issues", other).dedupe_key != first.dedupe_key
    # A re-run check suite completes again later.
    suite = example("check_suite", "completed")
    rerun = example("check_suite", "completed")
    rerun["check_suite"]["updated_at"] = "2031-01-01T00:00:00Z"
    assert _norm("check_suite", rerun).dedupe_key != _norm("check_suite", suite).dedupe_key
    # A new push moves `after`.
    push = example("push")
    pushed = example("push")
    pushed["after"] = "f" * 40
    assert _norm("push", pushed).dedupe_key != _norm("push", push).dedupe_key
    # An edit to unrelated fields of a comment does not change its key.
    comment = example("issue_comment", "created")
    edited_body = example("issue_comment", "created")
    edited_body["comment"]["body"] = "something else"
    assert (
        _norm("issue_comment", edited_body).dedupe_key == _norm("issue_comment", comment).dedupe_key
    )


def test_generic_event_keys_come_from_content() -> None:
    payload = example("star", "created")
    a = _norm("star", payload, delivery="x")
    b = _norm("star", payload, delivery="y")
    assert a.dedupe_key == b.dedupe_key
    assert a.type == "github.star.created"
    assert a.subject.kind == "repository"


def test_org_level_event_has_no_repo() -> None:
    env = _norm("organization", example("organization"))
    assert env.scope.repo is None
    assert env.dedupe_key.startswith("github:" + example("organization")["organization"]["login"])


def test_dispatch_keys_from_run_id_or_delivery() -> None:
    payload = example("workflow_dispatch")
    by_run = normalize("workflow_dispatch", payload, via="actions", received_at=NOW, run_id="77")
    assert by_run.dedupe_key.endswith(":77")
    by_delivery = _norm("workflow_dispatch", payload, delivery="abc-1")
    assert by_delivery.dedupe_key.endswith(":abc-1")
    assert by_run.payload["inputs"] == payload["inputs"]


@pytest.mark.parametrize(
    ("event", "index"),
    [(event, i) for event in ("workflow_dispatch", "repository_dispatch") for i in range(2)],
)
def test_dispatch_subject_is_the_repository(event: str, index: int) -> None:
    # workflow_dispatch's example carries `ref`, which the generic path would take for a subject.
    payload = examples()[event][index]
    env = normalize(event, payload, via="actions", received_at=NOW, run_id="77")
    assert env.subject is not None
    assert (env.subject.kind, env.subject.id) == ("repository", payload["repository"]["full_name"])
    assert env.subject.head_sha is None


@pytest.mark.parametrize(
    ("association", "authority"),
    [
        ("OWNER", "owner"),
        ("NONE", "none"),
        ("FIRST_TIMER", "none"),
        ("FIRST_TIME_CONTRIBUTOR", "none"),
        ("CONTRIBUTOR", "none"),
        ("MANNEQUIN", "none"),
        ("MEMBER", "unknown"),
        ("COLLABORATOR", "unknown"),
        (None, "unknown"),
    ],
)
def test_authority(association: str | None, authority: str) -> None:
    assert authority_of(association) == authority
    payload = example("issue_comment", "created")
    payload["comment"]["author_association"] = association
    actor = _norm("issue_comment", payload).actor
    assert actor.association == association
    assert actor.authority == authority


def test_bots_by_type_not_suffix() -> None:
    payload = example("issue_comment", "created")
    payload["sender"]["type"] = "Bot"
    payload["sender"]["login"] = payload["comment"]["user"]["login"] = "renovate"
    assert _norm("issue_comment", payload).actor.is_bot is True
    human = example("issue_comment", "created")
    human["sender"]["login"] = human["comment"]["user"]["login"] = "lookalike[bot]"
    assert _norm("issue_comment", human).actor.is_bot is False


def test_association_only_when_the_sender_wrote_the_object() -> None:
    payload = example("issues", "labeled")
    payload["issue"]["author_association"] = "OWNER"
    payload["sender"]["login"] = "someone-else"
    actor = _norm("issues", payload).actor
    assert actor.association is None
    assert actor.authority == "unknown"


def test_commands_only_from_created_comments() -> None:
    created = example("issue_comment", "created")
    created["comment"]["body"] = "/holon solve please"
    env = _norm("issue_comment", created)
    assert env.command.name == "solve"
    assert env.command.args == "please"
    for action in ("edited", "deleted"):
        payload = example("issue_comment", action)
        payload["comment"]["body"] = "/holon solve"
        assert _norm("issue_comment", payload).command is None
    review = example("pull_request_review", "submitted")
    review["review"]["body"] = "Looks off.\n/holon fix the flaky test"
    assert _norm("pull_request_review", review).command.name == "fix"


def test_comment_on_pull_request_has_pr_subject() -> None:
    payload = example("issue_comment", "created")
    payload["issue"]["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/1"}
    assert _norm("issue_comment", payload).subject.kind == "pull_request"


@pytest.mark.parametrize(
    ("event", "mutate", "message"),
    [
        (
            "issues",
            lambda p: p.pop("issue"),
            "event issues disagrees with its payload: no `issue` object",
        ),
        ("pull_request", lambda p: p.pop("pull_request"), "no `pull_request` object"),
        (
            "issues",
            lambda p: p["issue"].pop("number"),
            "issues payload has no numeric `issue.number`",
        ),
        (
            "issues",
            lambda p: p["issue"].pop("updated_at"),
            "issues payload has no `issue.updated_at`",
        ),
        ("push", lambda p: p.pop("after"), "push payload has no `after`"),
    ],
)
def test_payload_errors_name_the_field(event: str, mutate: Any, message: str) -> None:
    payload = example(event, "opened" if event != "push" else None)
    mutate(payload)
    with pytest.raises(PayloadError) as info:
        _norm(event, payload)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_issue_label_event_without_label_normalizes() -> None:
    payload = example("issues", "labeled")
    del payload["label"]
    assert _norm("issues", payload).dedupe_key.endswith(
        f":labeled::{payload['issue']['updated_at']}"
    )


def test_event_name_that_disagrees_with_payload() -> None:
    with pytest.raises(PayloadError, match="it has `pull_request`"):
        _norm("issues", example("pull_request", "opened"))


def test_old_enterprise_shape_without_optional_fields() -> None:
    # Only the fields the row reads are needed: strip everything else.
    full = example("pull_request", "synchronize")
    minimal = {
        "action": "synchronize",
        "pull_request": {
            "number": full["pull_request"]["number"],
            "head": {"sha": full["pull_request"]["head"]["sha"]},
        },
        "repository": {"full_name": "o/r"},
    }
    env = _norm("pull_request", minimal)
    number, sha = full["pull_request"]["number"], full["pull_request"]["head"]["sha"]
    assert env.dedupe_key == f"github:o/r:pull_request.synchronize:{number}:{sha}"
    assert env.actor is None
    assert env.at == NOW
