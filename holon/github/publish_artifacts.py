"""A settled run's output directory, read for publishing: `run.json` (the runner's record),
`diff.patch`, `summary.md`, `review.json` and `review.md` (github-review), `pr-fix.json`
(github-pr-fix).

The agent wrote that directory, so nothing in it is followed: each file is opened under the
directory's fd, never through a symlink, as a regular file only, and size-bounded
(`fsutil.read_regular_at`); an agent that put a link to a host file at `review.json` gets a
refusal, not the file's contents posted to GitHub. Only a run the runner judged a success
(`completed`, `success`) is published; its base is the snapshot's `head`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from holon.contract.layout import PATCH_FILE, RUN_RECORD_FILE
from holon.errors import InvalidInput
from holon.fsutil import NotRegular, open_dir, read_regular_at
from holon.github.errors import PublishError
from holon.jsonio import load_object
from holon.runner.record import RunResult
from holon.validation import describe_validation_error

RECORD_LIMIT = 8 * 1024 * 1024
TEXT_LIMIT = 256 * 1024
JSON_LIMIT = 1024 * 1024
SUMMARY_FILE = "summary.md"
REVIEW_FILE = "review.json"
REVIEW_BODY_FILE = "review.md"
PR_FIX_FILE = "pr-fix.json"


@dataclass(frozen=True)
class RunArtifacts:
    run_id: str
    base_sha: str | None  # the commit the run started from (None: not a git workspace)
    patch: bytes
    summary: str
    review: bytes | None
    review_body: str
    pr_fix: bytes | None


def read_artifacts(output_dir: Path, max_patch_bytes: int) -> RunArtifacts:
    """What publishing needs from a successful run's output; PublishError otherwise."""
    try:
        fd = open_dir(output_dir)
    except OSError as exc:
        raise PublishError("bad-input", f"{output_dir}: {exc.strerror or exc}") from None
    try:
        run = _record(fd)
        if run.status != "completed" or run.outcome != "success":
            raise PublishError(
                "not-allowed",
                f"run {run.run_id} did not succeed ({run.status}, {run.outcome}): nothing of it "
                "is published",
            )
        has_patch = run.patch is not None and run.patch.path is not None
        patch = _read(fd, PATCH_FILE, max_patch_bytes) if has_patch else None
        summary = _read(fd, SUMMARY_FILE, TEXT_LIMIT)
        review_body = _read(fd, REVIEW_BODY_FILE, TEXT_LIMIT)
        return RunArtifacts(
            run_id=run.run_id,
            base_sha=run.snapshot.head if run.snapshot else None,
            patch=patch or b"",
            summary=summary.decode("utf-8", "replace") if summary else "",
            review=_read(fd, REVIEW_FILE, JSON_LIMIT),
            review_body=review_body.decode("utf-8", "replace") if review_body else "",
            pr_fix=_read(fd, PR_FIX_FILE, JSON_LIMIT),
        )
    finally:
        os.close(fd)


def _record(fd: int) -> RunResult:
    raw = _read(fd, RUN_RECORD_FILE, RECORD_LIMIT)
    if raw is None:
        raise PublishError("bad-input", "run.json is missing: the run has not settled")
    try:
        return RunResult.model_validate(load_object(raw, RUN_RECORD_FILE))
    except InvalidInput as exc:
        raise PublishError("bad-input", str(exc)) from None
    except ValidationError as exc:
        raise PublishError("bad-input", describe_validation_error(RUN_RECORD_FILE, exc)) from None


def _read(fd: int, name: str, limit: int) -> bytes | None:
    """The file's bytes; None when absent; PublishError when it is not a plain regular file
    or larger than `limit`."""
    try:
        return read_regular_at(fd, name, limit)
    except FileNotFoundError:
        return None
    except NotRegular as exc:
        raise PublishError("unsafe-path", f"{name} is refused: {exc}") from None
