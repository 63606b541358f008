"""Cursor reconciliation on ticks (owner: H4). A minimal stand-in: nothing missed, no cursor."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import github

    from holon.gateway.envelope import EventEnvelope
    from holon.state.model import Record, ServeState


def reconcile(
    state: ServeState,
    client: github.Github,
    repo: str,
    *,
    now: datetime,
    mention: str | None,
    limit: int = 100,
) -> tuple[list[EventEnvelope], Record | None]:
    return [], None


__all__ = ["reconcile"]
