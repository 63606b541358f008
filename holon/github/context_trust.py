"""Trust marks on a context's records, and leaving out untrusted authors' text when the policy
says so (`settings.context.untrusted: exclude`).

Every comment, review and review comment gets `trust` (`holon/github/trust.py`); the item
(issue or pull request) too. An author whose association does not settle it (a MEMBER or a
COLLABORATOR) has their permission read once through the reader, when it can (the API; the
payload cannot), at most `LOOKUPS` authors per collection. With `exclude`, a record whose
author is not trusted is left out, except the trigger (the text that asked for the run, by
someone the controller already allowed); the count of what was left out is kept for the
manifest. The item is never left out: it is what the run is about; it is marked.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Protocol

from holon.github.context_records import Item
from holon.github.trust import TO_LOOK_UP, TRUSTED, trust_of

Untrusted = Literal["mark", "exclude"]
LOOKUPS = 30  # authors whose permission one collection reads, at most


class PermissionReader(Protocol):
    def permission(self, login: str) -> str | None:
        """GitHub's permission of `login` on the repository; None when it cannot be read."""
        ...


class TrustMarks:
    def __init__(self, reader: object, untrusted: Untrusted = "mark") -> None:
        self._reader = reader if hasattr(reader, "permission") else None
        self.untrusted = untrusted
        self._known: dict[str, str | None] = {}
        self.excluded: dict[str, int] = {}

    def _permission(self, login: str | None, association: str | None) -> str | None:
        # An app (`name[bot]`) is no collaborator: its association is all there is.
        if self._reader is None or not login or login.endswith("[bot]"):
            return None
        if association not in TO_LOOK_UP:
            return None
        key = login.casefold()
        if key not in self._known:
            if len(self._known) >= LOOKUPS:
                return None
            reader: PermissionReader = self._reader
            self._known[key] = reader.permission(login)
        return self._known[key]

    def trust(self, login: str | None, association: str | None) -> str:
        return trust_of(association, self._permission(login, association))

    def item(self, item: Item) -> Item:
        return dataclasses.replace(item, trust=self.trust(item.author, item.association))

    def records(self, name: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`records` each with its `trust`; with `exclude`, only the trusted ones and the
        trigger (the count of the rest kept under `name`)."""
        kept: list[dict[str, Any]] = []
        for record in records:
            mark = self.trust(record.get("author"), record.get("author_association"))
            if self.untrusted == "exclude" and mark != TRUSTED and not record.get("trigger"):
                self.excluded[name] = self.excluded.get(name, 0) + 1
                continue
            kept.append({**record, "trust": mark})
        return kept

    def reasons(self) -> list[tuple[str, str]]:
        """(part, reason) for the manifest's `missing`: what `exclude` left out."""
        return [
            (
                f"{name} (untrusted)",
                f"{count} by authors without confirmed write access left out: "
                "settings.context.untrusted is exclude",
            )
            for name, count in sorted(self.excluded.items())
        ]


__all__ = ["LOOKUPS", "TrustMarks", "Untrusted"]
