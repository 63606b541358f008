"""The envelope of the job's event, and the bad input around it."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from holon.actions.config import ActionConfig
from holon.actions.event import NO_EVENT, envelope_from_actions
from holon.errors import InvalidInput
from tests.actions.step_support import REPO, payload

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _env(path: Path, name: str = "issue_comment", **extra: str) -> dict[str, str]:
    return {
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_RUN_ID": "77",
        "GITHUB_REPOSITORY": REPO,
        **extra,
    }


def test_the_event_file_becomes_an_actions_envelope(tmp_path: Path) -> None:
    data = payload("issue_comment", "created")
    data["comment"]["body"] = "/holon solve"
    path = tmp_path / "event.json"
    path.write_text(json.dumps(data))
    env = _env(path)
    envelope = envelope_from_actions(env, ActionConfig.from_env(env), NOW)
    assert envelope.via == "actions"
    assert envelope.type == "github.issue_comment.created"
    assert envelope.scope.repo == REPO
    assert envelope.command is not None
    assert envelope.command.name == "solve"


def test_the_mention_input_is_the_commands_mention(tmp_path: Path) -> None:
    data = payload("issue_comment", "created")
    data["comment"]["body"] = "@bot solve"
    path = tmp_path / "event.json"
    path.write_text(json.dumps(data))
    env = _env(path, HOLON_MENTION="bot")
    envelope = envelope_from_actions(env, ActionConfig.from_env(env), NOW)
    assert envelope.command is not None
    assert envelope.command.name == "solve"


def test_a_missing_event_path_says_where_holon_action_runs() -> None:
    with pytest.raises(InvalidInput) as caught:
        envelope_from_actions({}, ActionConfig.from_env({}), NOW)
    assert str(caught.value) == NO_EVENT


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"[1, 2]", "expected a JSON object"), (b"{not json", "GITHUB_EVENT_PATH"), (b"", "")],
)
def test_an_event_file_that_is_not_a_json_object_is_refused(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "event.json"
    path.write_bytes(content)
    env = _env(path)
    with pytest.raises(InvalidInput) as caught:
        envelope_from_actions(env, ActionConfig.from_env(env), NOW)
    assert expected in str(caught.value)


def test_an_unreadable_event_file_is_refused(tmp_path: Path) -> None:
    env = _env(tmp_path / "missing.json")
    with pytest.raises(InvalidInput, match=r"^GITHUB_EVENT_PATH: file not found"):
        envelope_from_actions(env, ActionConfig.from_env(env), NOW)
    directory = _env(tmp_path)
    with pytest.raises(InvalidInput, match=r"^GITHUB_EVENT_PATH: cannot read"):
        envelope_from_actions(directory, ActionConfig.from_env(directory), NOW)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: the read must not hang
    env = _env(fifo)
    with pytest.raises(InvalidInput):
        envelope_from_actions(env, ActionConfig.from_env(env), NOW)
