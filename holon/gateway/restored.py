"""An envelope read back from stored state is data, never authority.

A state directory may be restored from elsewhere (an Actions artifact or cache), so an envelope
kept in it says nothing trustworthy about its actor: the authority, the association, even the
command could have been written by anyone who could write the file. `rederive` makes the envelope
again from its recorded payload, as the connector made it first, keeping only its identity (id
and dedupe key, under which the state knows it). A genuine envelope comes back as it was.
"""

from __future__ import annotations

from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import PayloadError, normalize


def rederive(kept: EventEnvelope, *, mention: str | None = "holon") -> EventEnvelope:
    """The envelope the connector makes of `kept`'s payload; PayloadError when it makes none."""
    head, _, rest = kept.type.partition(".")
    if head != "github":
        # Holon's own events (timer ticks, schedules) carry no actor and no command: one that
        # claims either was not made by Holon, and is read without them.
        return kept.model_copy(update={"actor": None, "command": None})
    event = rest.partition(".")[0]
    try:
        fresh = normalize(
            event,
            kept.payload,
            via=kept.via,
            received_at=kept.at,
            delivery=kept.delivery,
            mention=mention,
        )
    except PayloadError as exc:
        raise PayloadError(f"the kept payload no longer reads as {kept.type}: {exc}") from None
    # The repository comes from the payload only: the kept scope is as unverified as the rest.
    return fresh.model_copy(update={"id": kept.id, "dedupe_key": kept.dedupe_key})


__all__ = ["rederive"]
