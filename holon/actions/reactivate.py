"""Self re-activation of continuable work (owner: H4). A minimal stand-in: nothing re-dispatched."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holon.closure.record import ClosureRecord
    from holon.state.model import Record, ServeState


def reactivations(
    closures: Mapping[str, ClosureRecord], state: ServeState, *, budget: int, now: datetime
) -> tuple[list[Any], list[Record]]:
    return [], []


def dispatch_reactivations(
    items: Sequence[Any], scope: Any, *, workflow_file: str, ref: str
) -> list[str]:
    return []


__all__ = ["dispatch_reactivations", "reactivations"]
