"""Fan-out's decide job: the skill-run handler that performs nothing and hands the run on.

For each `run_skill` intent it writes the run bundle (`run_bundle.py`: the spec built as the
runner's own handler builds it, the user prompt, the run's GitHub context, the skill folder) into
`HOLON_BUNDLE_DIR/<intent>-<attempt>/`, adds a matrix entry (with the commit the run job checks
out and starts from: the pull request's head for a run on one, `matrix.start_commit`), and
raises `Deferred`: the controller leaves the intent inflight and journals the deferral. Host
skills (publishing) never reach it (the serve routes them to Holon's own handlers). Past
`MAX_JOBS` entries a run is deferred without a bundle, to the next pass, and says so. A run
another workflow run's decide took (its state merged here while its run jobs may still be at
it) is left to that run's settle until `HORIZON` has passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from holon.actions.matrix import MAX_JOBS, MatrixEntry, start_commit
from holon.actions.run_bundle import RunBundle, context_dir, write_bundle
from holon.errors import HolonError, InvalidInput
from holon.executor.deferral import Deferred
from holon.executor.handlers import ContextSource, result_of, skill_spec, user_prompt_of
from holon.executor.result import ActionResult
from holon.executor.scratch import CONTEXT, make_scratch, reclaim
from holon.fsutil import remove_tree
from holon.intent import ActionIntent
from holon.skills.catalog import SkillCatalog

# How long a run another workflow run took is left to it: beyond GitHub's 6-hour job limit and
# queueing, its settle has run or never will.
HORIZON = timedelta(hours=12)


class DeferHandler:
    def __init__(
        self,
        *,
        bundle_root: Path,
        clock: Callable[[], datetime],
        describe: Callable[[str], str],
        catalog: SkillCatalog,
        env: Mapping[str, str] | None = None,
        context: ContextSource | None = None,
        host: frozenset[str] = frozenset(),
        base_sha: str | None = None,
        limit: int = MAX_JOBS,
        by: str | None = None,
        prior: Callable[[str], Mapping[str, Any] | None] = lambda intent_id: None,
        horizon: timedelta = HORIZON,
        constraints: Mapping[str, Any] | None = None,
    ) -> None:
        self.bundle_root = bundle_root
        self.constraints = dict(constraints or {})  # the policy's run limits (docs/budgets.md)
        self.clock = clock
        self.describe = describe
        self.catalog = catalog
        self.env = dict(env or {})  # non-secret settings only: the engine, its model
        self.context = context
        self.host = host
        self.base_sha = base_sha  # the commit this job checked out (GITHUB_SHA)
        self.limit = limit
        # Who defers (the workflow run, `<run id>-<attempt>`), and what an intent's record says
        # of an earlier deferral: a run another workflow run still has is not run twice.
        self.by = by
        self.prior = prior
        self.horizon = horizon
        self.entries: list[MatrixEntry] = []  # this pass's run jobs, in order
        self.overflow: list[str] = []  # runs left for the next pass (the matrix was full)

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        skill = str(intent.args["skill"])
        if skill in self.host:
            why = f"{skill} is a host skill: it is performed by Holon itself, never by an agent"
            return result_of(intent, attempt, self.clock(), "failed", error=why)
        run = f"{intent.id}-{attempt}"
        subject = intent.target.subject()
        holder = self._holder(intent.id, attempt)
        if holder is not None:
            raise Deferred(
                run, f"left inflight: the run job of workflow run {holder} has it", keep=True
            )
        if len(self.entries) >= self.limit:
            self.overflow.append(run)
            raise Deferred(
                run,
                f"left inflight for the next pass: this pass's matrix holds {self.limit} run "
                "jobs already (GitHub runs at most 256 from one matrix)",
            )
        try:
            # Validated here, before it can become a matrix value: a run whose start is not
            # a full commit id fails in this job and never reaches the workflow.
            start = start_commit(intent, self.base_sha)
        except InvalidInput as exc:
            return result_of(intent, attempt, self.clock(), "failed", error=f"bundle: {exc}")
        bundle = RunBundle(
            run=run,
            intent=intent.id,
            attempt=attempt,
            subject=subject,
            skill=skill,
            spec=skill_spec(intent, self.env, self.describe, self.constraints),
            user_prompt=user_prompt_of(intent),
            base_sha=start,
        )
        try:
            directory = write_bundle(self.bundle_root, bundle, self.catalog.get(skill))
            if self.context is not None:
                self._collect(intent, context_dir(directory))
        except (HolonError, OSError) as exc:
            # No half bundle is left for a run job to pick up: the run failed here.
            stale = self.bundle_root / run
            if stale.is_dir() and not stale.is_symlink():
                remove_tree(stale)
            if isinstance(exc, HolonError):
                error = f"bundle: {exc}"
            else:
                error = f"bundle: cannot write {run}: {exc.strerror or type(exc).__name__}"
            return result_of(intent, attempt, self.clock(), "failed", error=error)
        self.entries = [e for e in self.entries if e.run != run]
        self.entries.append(MatrixEntry(run=run, skill=skill, subject=subject, ref=start))
        raise Deferred(
            run, f"deferred to run job {run}: run in a container job, settled after", by=self.by
        )

    def _holder(self, intent_id: str, attempt: int) -> str | None:
        """The other workflow run that took this attempt and may still be at it (its settle
        collects it), or None: not taken, taken by this run (a re-run), or long enough ago
        that its run is over (`horizon`, beyond GitHub's 6-hour job limit)."""
        deferred = self.prior(intent_id)
        if not isinstance(deferred, Mapping) or deferred.get("attempt") != attempt:
            return None
        by, at = deferred.get("by"), deferred.get("at")
        if not isinstance(by, str) or not by or not isinstance(at, str):
            return None
        if self.by is not None and by.split("-")[0] == self.by.split("-")[0]:
            return None  # the same workflow run, run again: its earlier attempt is over
        try:
            since = datetime.fromisoformat(at)
        except ValueError:
            return None
        if since.tzinfo is None or self.clock() - since > self.horizon:
            return None
        return by[:40]

    def _collect(self, intent: ActionIntent, dest: Path) -> None:
        assert self.context is not None
        # Collected beside the bundle first: a context that fails leaves no half directory.
        reclaim(dest.parent)  # a killed step's half-collected context goes first
        scratch = make_scratch(CONTEXT, dest.parent)
        try:
            try:
                self.context.collect(intent, scratch / "context")
            except HolonError as exc:
                raise HolonError(f"context: {exc}") from None
            (scratch / "context").rename(dest)
        finally:
            remove_tree(scratch)


__all__ = ["DeferHandler"]
