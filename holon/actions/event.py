"""The envelope of the event a workflow run was started by: `GITHUB_EVENT_NAME` and the payload
GitHub wrote to `GITHUB_EVENT_PATH`, normalized as any GitHub event (`via="actions"`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from holon import jsonio
from holon.actions.config import ActionConfig
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope

# GitHub's own webhook payload cap; an event file larger than this was not written by GitHub.
EVENT_LIMIT = 25 * 1024 * 1024
NO_EVENT = "GITHUB_EVENT_PATH is not set: holon action runs as a step of a GitHub Actions job"


def read_event(env: Mapping[str, str]) -> tuple[str, dict[str, object]]:
    """The event's name and its payload object; one InvalidInput line when either is missing or
    the file is not a JSON object (bounded read: a FIFO or a huge file stops at the limit)."""
    path = env.get("GITHUB_EVENT_PATH", "").strip()
    if not path:
        raise InvalidInput(NO_EVENT)
    name = env.get("GITHUB_EVENT_NAME", "").strip()
    if not name:
        raise InvalidInput("GITHUB_EVENT_NAME is not set: which event started this run?")
    if path == "-":
        raise InvalidInput("GITHUB_EVENT_PATH: a file GitHub wrote, not standard input")
    try:
        raw = jsonio.read_path(path, EVENT_LIMIT)
    except InvalidInput as exc:
        # The reader names only the path; the line must say which setting named it.
        raise InvalidInput(f"GITHUB_EVENT_PATH: {exc}") from None
    payload = jsonio.load_object(raw, f"GITHUB_EVENT_PATH {path}")
    return name, payload


def envelope_from_actions(
    env: Mapping[str, str], config: ActionConfig, now: datetime
) -> EventEnvelope:
    from holon.gateway.github import normalize

    name, payload = read_event(env)
    return normalize(
        name,
        payload,
        via="actions",
        received_at=now,
        run_id=config.run_id,
        repository=config.repository,
        mention=config.mention,
    )


__all__ = ["EVENT_LIMIT", "NO_EVENT", "envelope_from_actions", "read_event"]
