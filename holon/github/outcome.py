"""What one GitHub effect did, in the one shape every effect returns (merge, comment, label...).

- `performed`: this call changed GitHub (a merge made, a comment posted);
- `output`: what the controller journals and later effects read (the merge sha, a comment id);
- `note`: why, in one line, when nothing was performed (a refusal names its reason);
- `wait`: set when the effect could not happen yet and should be tried again on a later event
  or tick (the head moved, checks are still running): a wait, not a failure.

A failure is an exception (`holon.github.errors.GitHubError`), never an outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class EffectOutcome:
    effect: str  # which effect answered: comment, label, merge, ...
    performed: bool
    output: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    wait: str | None = None
