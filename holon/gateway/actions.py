"""A GitHub Actions run as an event: `GITHUB_EVENT_NAME` and the payload at `GITHUB_EVENT_PATH`.

There is no delivery id inside Actions; dispatches and schedules are keyed by the run id. A
`schedule` event file carries only the cron expression, so it becomes a `timer.tick`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from holon import jsonio
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.gateway.payload import MAX_PAYLOAD_BYTES, decode_payload


def _read(path: Path) -> bytes:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InvalidInput(f"GITHUB_EVENT_PATH {path}: {exc.strerror}") from None
    with handle:
        return jsonio.read_stream(handle, MAX_PAYLOAD_BYTES, f"GITHUB_EVENT_PATH {path}")


def from_actions(
    env: Mapping[str, str],
    *,
    received_at: datetime,
    read: Callable[[Path], bytes] = _read,
    mention: str | None = "holon",
) -> EventEnvelope:
    event = env.get("GITHUB_EVENT_NAME")
    path = env.get("GITHUB_EVENT_PATH")
    if not event or not path:
        raise InvalidInput(
            "not inside a GitHub Actions run: GITHUB_EVENT_NAME/GITHUB_EVENT_PATH unset"
        )
    payload = decode_payload(read(Path(path)), source="GITHUB_EVENT_PATH")
    return normalize(
        event,
        payload,
        via="actions",
        received_at=received_at,
        run_id=env.get("GITHUB_RUN_ID") or None,
        repository=env.get("GITHUB_REPOSITORY") or None,
        mention=mention,
    )
