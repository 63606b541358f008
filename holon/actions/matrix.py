"""Fan-out's job matrix: one entry per deferred skill run, as `strategy.matrix` reads it.

GitHub runs at most 256 jobs from one matrix; a pass that defers more leaves the rest inflight
for the next pass (journaled), so nothing is dropped and no matrix is refused by GitHub.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from holon.errors import InvalidInput
from holon.intent import ActionIntent

MAX_JOBS = 256
# A matrix value reaches the workflow (`actions/checkout`'s `ref:`): a commit id and nothing
# else, whatever the payload or the live pull request said.
COMMIT_PATTERN = r"^[0-9a-f]{40}$"  # pydantic's regex: `$` is the end of the text only
COMMIT = re.compile(r"[0-9a-f]{40}")


class MatrixEntry(BaseModel):
    """What a run job is told: which bundle to run (`run`), the commit it checks out and
    starts from (`ref`, see `start_commit`), and for the job's title only, the skill and the
    subject."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run: str
    skill: str
    subject: str
    ref: str | None = Field(default=None, pattern=COMMIT_PATTERN)


def start_commit(intent: ActionIntent, checkout: str | None) -> str | None:
    """The commit `intent`'s run starts from: the pull request's head (`head_sha`, recorded
    by the decider) for a run on a pull request, else `checkout`, the commit the decide job
    checked out (GITHUB_SHA); None when neither is known. Both sides of fan-out ask it: decide
    to tell the run job what to check out, settle to know which start to accept. A fork's head
    counts too: the run job holds no write token and no cache token, so checking it out there
    is safe. Not a full commit id -> InvalidInput (one line), never a matrix value."""
    head = intent.args.get("head_sha") if intent.target.kind == "pull_request" else None
    if isinstance(head, str) and head:
        if not COMMIT.fullmatch(head):
            raise InvalidInput(f"the pull request's head {head[:80]!r} is not a full commit id")
        return head
    if checkout:
        if not COMMIT.fullmatch(checkout):
            raise InvalidInput(f"the checked-out commit {checkout[:80]!r} is not a full commit id")
        return checkout
    return None


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


__all__ = [
    "COMMIT",
    "COMMIT_PATTERN",
    "MAX_JOBS",
    "MatrixEntry",
    "matrix_json",
    "matrix_runs",
    "start_commit",
]
