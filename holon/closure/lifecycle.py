"""Terminal lifecycle outcomes (Explicit Terminal Stop contract) and legacy normalization.

Five canonical, user-facing outcomes. Legacy values are compatibility inputs only; `cancelled`
and its spellings are internal administrative stops and never shown to users as an outcome.
Precedence: canonical `lifecycle_outcome` > legacy `run_outcome` > inference from
`current_phase` and question metadata. Unknown values are errors, never mapped to success.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from holon.errors import InvalidInput

LifecycleOutcome = Literal["finished", "blocked", "failed", "userinterlude", "askuserQuestion"]
CANONICAL: tuple[LifecycleOutcome, ...] = (
    "finished",
    "blocked",
    "failed",
    "userinterlude",
    "askuserQuestion",
)
_CANONICAL_BY_LOWER = {value.lower(): value for value in CANONICAL}

_LEGACY_FINISHED = ("finish", "complete", "completed", "done")
_LEGACY_INTERNAL = ("cancelled", "canceled", "abort", "aborted")
_BLOCKED_ON_USER = "blocked_on_user"

# current_phase -> what it implies. `None` means "not terminal": the workflow is still going.
# "question" means askuserQuestion when question metadata proves a question, else userinterlude.
PHASES: dict[str, LifecycleOutcome | Literal["question", "internal"] | None] = {
    "planning": None,
    "executing": None,
    "verifying": None,
    "awaiting_user": "question",
    "blocked": "blocked",
    "failed": "failed",
    "done": "finished",
    "cancelled": "internal",
}


class Normalized(BaseModel):
    """A lifecycle reading: the canonical outcome, or why there is none to show."""

    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    lifecycle_outcome: LifecycleOutcome | None
    source: Literal["lifecycle_outcome", "run_outcome", "current_phase", "none"]
    internal: Literal["cancelled"] | None = None
    terminal: bool
    note: str


ValueSource = Literal["lifecycle_outcome", "run_outcome"]


def _from_value(value: str, question_id: str | None, src: ValueSource) -> Normalized:
    text = value.strip()
    lower = text.lower()
    if lower in _CANONICAL_BY_LOWER:
        return Normalized(
            lifecycle_outcome=_CANONICAL_BY_LOWER[lower],
            source=src,
            terminal=True,
            note="canonical",
        )
    if lower in _LEGACY_FINISHED:
        return Normalized(
            lifecycle_outcome="finished",
            source=src,
            terminal=True,
            note=f"legacy {text!r} normalized to finished",
        )
    if lower == _BLOCKED_ON_USER:
        outcome: LifecycleOutcome = "askuserQuestion" if question_id else "userinterlude"
        why = "question metadata proves a question" if question_id else "no question metadata"
        return Normalized(
            lifecycle_outcome=outcome,
            source=src,
            terminal=True,
            note=f"legacy blocked_on_user: {why}",
        )
    if lower in _LEGACY_INTERNAL:
        return Normalized(
            lifecycle_outcome=None,
            source=src,
            internal="cancelled",
            terminal=True,
            note="internal administrative stop; not a user-facing outcome",
        )
    known = ", ".join([*CANONICAL, *_LEGACY_FINISHED, _BLOCKED_ON_USER, *_LEGACY_INTERNAL])
    raise InvalidInput(f"unknown {src} value {value!r}: expected one of {known}")


def _from_phase(phase: str, question_id: str | None) -> Normalized:
    lower = phase.strip().lower()
    if lower not in PHASES:
        raise InvalidInput(f"unknown current_phase {phase!r}: expected one of {', '.join(PHASES)}")
    implied = PHASES[lower]
    if implied is None:
        return Normalized(
            lifecycle_outcome=None,
            source="current_phase",
            terminal=False,
            note=f"phase {lower} is not terminal",
        )
    if implied == "internal":
        return Normalized(
            lifecycle_outcome=None,
            source="current_phase",
            internal="cancelled",
            terminal=True,
            note="internal administrative stop; not a user-facing outcome",
        )
    if implied == "question":
        outcome: LifecycleOutcome = "askuserQuestion" if question_id else "userinterlude"
        return Normalized(
            lifecycle_outcome=outcome,
            source="current_phase",
            terminal=True,
            note="awaiting_user with question metadata"
            if question_id
            else "awaiting_user without question metadata",
        )
    return Normalized(
        lifecycle_outcome=implied,
        source="current_phase",
        terminal=True,
        note=f"inferred from phase {lower}",
    )


def resolve(
    lifecycle_outcome: str | None = None,
    run_outcome: str | None = None,
    current_phase: str | None = None,
    question_id: str | None = None,
) -> Normalized:
    """Apply the contract's precedence to whatever lifecycle metadata a state holds."""
    if lifecycle_outcome:
        # A legacy value found in the canonical field is still read, and normalized.
        return _from_value(lifecycle_outcome, question_id, "lifecycle_outcome")
    if run_outcome:
        return _from_value(run_outcome, question_id, "run_outcome")
    if current_phase:
        return _from_phase(current_phase, question_id)
    return Normalized(
        lifecycle_outcome=None, source="none", terminal=False, note="no lifecycle metadata"
    )
