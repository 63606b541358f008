"""How far a context record's author is trusted: whether they can write to the repository.

A skill run's context holds other people's text (comments, reviews, review comments, the issue
itself); each record says who wrote it, GitHub's `author_association`, and a trust mark the
agent's prompt tells it to weigh: only text by someone with write access speaks for the
repository. Pure: the permission, when known, was read by the caller (`context_api`).

- `trusted: write access`: GitHub's permission is write, maintain or admin, or the author is
  the repository's OWNER.
- `untrusted: no write access`: the permission is lower, or the association says the author
  is no collaborator (NONE, CONTRIBUTOR, FIRST_TIMER, FIRST_TIME_CONTRIBUTOR, MANNEQUIN).
- `untrusted: write access not confirmed`: a MEMBER or COLLABORATOR whose permission was not
  read (membership does not prove write access), or no association at all.
"""

from __future__ import annotations

from typing import Final, Literal

Trust = Literal[
    "trusted: write access",
    "untrusted: no write access",
    "untrusted: write access not confirmed",
]
TRUSTED: Final = "trusted: write access"
NO_WRITE: Final = "untrusted: no write access"
UNCONFIRMED: Final = "untrusted: write access not confirmed"
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
OUTSIDERS = frozenset({"NONE", "CONTRIBUTOR", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN"})
# Associations whose write access only the permission can tell.
TO_LOOK_UP = frozenset({"MEMBER", "COLLABORATOR"})


def trust_of(association: str | None, permission: str | None = None) -> Trust:
    """The mark of an author with `association` and, when read, `permission`."""
    if permission is not None:
        return TRUSTED if permission in WRITE_PERMISSIONS else NO_WRITE
    if association == "OWNER":
        return TRUSTED
    if association in OUTSIDERS:
        return NO_WRITE
    return UNCONFIRMED


__all__ = ["NO_WRITE", "TRUSTED", "UNCONFIRMED", "Trust", "trust_of"]
