"""Recorded events (docs/architecture.md, "Conventions"): one JSON object per line, a raw delivery
`{"event", "delivery", "payload"}` or an already normalized EventEnvelope."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from holon import jsonio
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope, from_outside
from holon.gateway.github import normalize
from holon.gateway.payload import MAX_PAYLOAD_BYTES
from holon.validation import describe_validation_error

# A raw delivery line holds a whole payload plus its event name and delivery id.
MAX_LINE_BYTES = MAX_PAYLOAD_BYTES + 64 * 1024


def parse_line(
    raw: bytes | None, where: str, *, received_at: datetime, mention: str | None = "holon"
) -> EventEnvelope | None:
    """One replay line as an envelope; None for a blank line; InvalidInput naming `where`.

    `raw` is None for a line `jsonio.lines` found over the limit (and never read whole).
    """
    if raw is None or len(raw) > MAX_LINE_BYTES:
        raise InvalidInput(f"{where}: over the {MAX_LINE_BYTES // (1024 * 1024)} MiB limit")
    if not raw.strip():
        return None
    data = jsonio.loads(raw, where)
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: expected a JSON object")
    if "dedupe_key" in data:
        try:
            return from_outside(EventEnvelope.model_validate(data), where)
        except ValidationError as exc:
            raise InvalidInput(describe_validation_error(where, exc)) from None
    return _delivery(data, where, received_at=received_at, mention=mention)


def _delivery(
    data: dict[str, Any], where: str, *, received_at: datetime, mention: str | None
) -> EventEnvelope:
    """A raw delivery line's envelope; InvalidInput naming `where`."""
    event, payload, delivery = data.get("event"), data.get("payload"), data.get("delivery")
    if not isinstance(event, str) or not isinstance(payload, dict):
        raise InvalidInput(f'{where}: expected {{"event": NAME, "payload": {{...}}}}')
    if delivery is not None and not isinstance(delivery, str):
        raise InvalidInput(f"{where}: delivery must be a string")
    try:
        return normalize(
            event,
            payload,
            via="replay",
            received_at=received_at,
            delivery=delivery,
            mention=mention,
        )
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from None


def read_line(
    raw: bytes | None, where: str, *, received_at: datetime, mention: str | None
) -> tuple[EventEnvelope | None, str | None]:
    """`parse_line`'s envelope, and for a raw delivery its payload's JSON text as the line has
    it (None: not known). One parse: a line that is not a well-formed delivery is read again by
    `parse_line`, which refuses it in its own words (or reads an envelope line)."""
    found = (
        jsonio.load_members(raw, where) if raw is not None and len(raw) <= MAX_LINE_BYTES else None
    )
    if found is not None and "dedupe_key" not in found[0]:
        data, texts = found
        try:
            env = _delivery(data, where, received_at=received_at, mention=mention)
        except InvalidInput:
            pass  # parse_line says why
        else:
            return env, texts["payload"] if _same(env.payload, data["payload"]) else None
    return parse_line(raw, where, received_at=received_at, mention=mention), None


def _same(kept: dict[str, Any], read: dict[str, Any]) -> bool:
    """Whether the envelope kept the payload as read: the model copies the outer dict only, so
    the same members, in the same order, each the very value read."""
    return len(kept) == len(read) and all(
        a == b and x is y for (a, x), (b, y) in zip(kept.items(), read.items(), strict=True)
    )


def read_replay(
    lines: Iterable[bytes | None], *, received_at: datetime, mention: str | None = "holon"
) -> Iterator[EventEnvelope]:
    """Every envelope of a replay stream; the first broken line raises (see serve for skipping)."""
    for number, raw in enumerate(lines, start=1):
        envelope = parse_line(
            raw, f"replay line {number}", received_at=received_at, mention=mention
        )
        if envelope is not None:
            yield envelope
