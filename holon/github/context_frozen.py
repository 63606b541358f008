"""The trigger in a run's context is the text that triggered it, never the live one.

A comment edited (or an issue body rewritten) between the event and the run's context would
otherwise put words in front of the agent that nobody authorized: the context collector writes
the trigger's text as the event carried it (`gateway/trigger.py`'s snapshot) and, reading
through the API, notes in the manifest whether the live item still says the same
(`ContextTrigger.live`: unchanged, edited, deleted; `unchecked` from the payload alone) with a
`missing` entry `trigger (live)` when it does not. The live version itself is left out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from holon.gateway.trigger import TriggerSnapshot
from holon.github import context_records as rec
from holon.github.context_records import Item

LiveState = Literal["unchanged", "edited", "deleted"]


class LiveTrigger:
    """What the collection saw of the trigger on GitHub now (the API's lists and item)."""

    def __init__(self, snapshot: TriggerSnapshot) -> None:
        self.snapshot = snapshot
        self.state: LiveState | None = None
        self.at: str | None = None

    def saw(self, state: LiveState, at: Any = None) -> None:
        # The worst finding stands: one list holding it unchanged does not clear an edit.
        order = ("unchanged", "edited", "deleted")
        if self.state is None or order.index(state) > order.index(self.state):
            self.state = state
            self.at = rec.short(at)

    def note(self) -> str:
        """The manifest's one line on a trigger that changed since the event."""
        what = self.snapshot.named()
        if self.state == "deleted":
            return (
                f"{what} is no longer on GitHub (deleted after the event): the context holds "
                "the text the event carried"
            )
        at = f" (updated {self.at})" if self.at else ""
        return (
            f"{what} was edited after the event{at}: the context holds the text the event "
            "carried, not the live one"
        )


def frozen_item(item: Item, snapshot: TriggerSnapshot, live: LiveTrigger | None) -> Item:
    """The issue or pull request with the title and body the event carried (when it is the
    trigger); `live` notes whether the item read now said the same."""
    title = rec.short(snapshot.title) if snapshot.title is not None else None
    body = rec.untrusted(snapshot.body)
    if live is not None:
        same = item.title == title and (item.body or "") == body
        live.saw("unchanged" if same else "edited")
    return replace(item, title=title, body=body)


__all__ = ["LiveState", "LiveTrigger", "frozen_item"]
