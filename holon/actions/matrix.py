"""Fan-out's job matrix: one entry per deferred skill run, as `strategy.matrix` reads it.

GitHub runs at most 256 jobs from one matrix; a pass that defers more leaves the rest inflight
for the next pass (journaled), so nothing is dropped and no matrix is refused by GitHub.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

MAX_JOBS = 256


class MatrixEntry(BaseModel):
    """What a run job is told: which bundle to run (`run`), and for the job's title only,
    the skill and the subject."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run: str
    skill: str
    subject: str


def matrix_json(entries: Iterable[MatrixEntry]) -> str:
    """`{"include": [...]}`, compact; `{"include": []}` when there is nothing to run."""
    include = [entry.model_dump() for entry in entries]
    return json.dumps({"include": include}, separators=(",", ":"))


def matrix_runs(text: str | None) -> frozenset[str] | None:
    """The runs a decide job's matrix (`HOLON_MATRIX`) named; None when none was given (by
    hand: every deferred run is collected). Not a matrix -> ValueError."""
    if text is None or not text.strip():
        return None
    data = json.loads(text)
    include = data.get("include") if isinstance(data, Mapping) else None
    if not isinstance(include, list):
        raise ValueError('not a matrix: expected {"include": [...]}')
    runs = [item.get("run") for item in include if isinstance(item, Mapping)]
    if len(runs) != len(include) or not all(isinstance(r, str) for r in runs):
        raise ValueError("not a matrix: every entry names its run")
    return frozenset(str(r) for r in runs)


__all__ = ["MAX_JOBS", "MatrixEntry", "matrix_json", "matrix_runs"]
