"""Fan-out's settle job: the skill-run handler that collects what a run job left; it never
runs an agent.

For the deferred attempt `<intent>-<attempt>` it reads `<runs dir>/<run>/` (put there by
`run_intake.py`), a directory the settle side knows: the paths inside `run.json` were written in
the run job's container and are never used. The run job ran untrusted work with the agent, so
its record is checked, not believed: `run.json` must parse and name this run, the manifest is
read again, and the skill's declared artifacts are validated again against their schemas (the
runner's own checks, `holon.runner.artifacts`). The run must have started from the commit its job
was told to check out (`matrix.start_commit`: the pull request's head for a run on one), so
publishing builds on the commit decide chose. A record that claims success the output does not
bear out is refused: failed, with the evidence, and the directory is moved aside so nothing
publishes it. No output at all is a failed run: the job was cancelled, timed out, or failed
before its upload. A run the decide job left for a later pass (not in this settle's matrix) is
handed on again (`Deferred`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from holon import jsonio
from holon.actions.matrix import start_commit
from holon.contract.layout import PATCH_FILE, RUN_RECORD_FILE
from holon.errors import InvalidInput
from holon.executor.deferral import Deferred
from holon.executor.handlers import from_run_record, result_of
from holon.executor.result import ActionResult
from holon.executor.usage import Pricer
from holon.fsutil import NotRegular, open_dir, open_regular_at, read_regular_at
from holon.intent import ActionIntent
from holon.runner.record import RunResult
from holon.skills.catalog import SkillCatalog
from holon.validation import describe_validation_error

RECORD_LIMIT = 8 * 1024 * 1024
NO_OUTPUT = "the run job left no output (cancelled, timed out, or failed before upload)"
REFUSED_SUFFIX = ".refused"


class CollectHandler:
    def __init__(
        self,
        *,
        runs_dir: Path,
        clock: Callable[[], datetime],
        catalog: SkillCatalog,
        expected: frozenset[str] | None = None,
        refused: Mapping[str, str] | None = None,
        base_sha: str | None = None,
        price: Pricer | None = None,
    ) -> None:
        self.runs_dir = runs_dir
        self.price = price  # the policy's prices applied to each run's usage
        self.clock = clock
        self.catalog = catalog
        self.expected = expected  # the runs of this settle's matrix; None: every deferred run
        self.refused = dict(refused or {})  # run -> why its artifact was not taken (intake)
        # The commit every trusted job of this workflow run checked out (GITHUB_SHA). A run
        # must start where decide told its job to (`start_commit`: the pull request's head
        # for a run on one, else this commit); a record saying it started elsewhere would
        # have publishing build on a commit nobody chose.
        self.base_sha = base_sha

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        run = f"{intent.id}-{attempt}"
        if self.expected is not None and run not in self.expected:
            # Another workflow run's (its state merged here), or one left for the next pass.
            raise Deferred(run, "left inflight: not in this settle's matrix", keep=True)
        if run in self.refused:
            return self._failed(intent, attempt, self.refused[run])
        output = self.runs_dir / run
        if not output.exists() and not output.is_symlink():
            return self._failed(intent, attempt, NO_OUTPUT)
        try:
            result = self._checked(intent, run, output)
        except InvalidInput as exc:
            aside = self._set_aside(output)
            return self._failed(intent, attempt, f"the run job's output is refused: {exc}", aside)
        return from_run_record(intent, attempt, self.clock(), result, output, self.price)

    def _failed(
        self, intent: ActionIntent, attempt: int, why: str, output: Path | None = None
    ) -> ActionResult:
        return result_of(
            intent,
            attempt,
            self.clock(),
            "failed",
            run_status="failed",
            run_output_path=str(output) if output is not None else None,
            error=why,
        )

    def _checked(self, intent: ActionIntent, run: str, output: Path) -> RunResult:
        """The run's record, once the output bears it out; InvalidInput saying what does not."""
        try:
            fd = open_dir(output) if not output.is_symlink() else None
        except OSError as exc:
            raise InvalidInput(f"{run} is not a readable directory ({exc.strerror})") from None
        if fd is None:
            raise InvalidInput(f"{run} is a link")
        try:
            result = _record(fd)
            if result.run_id != run:
                raise InvalidInput(f"run.json records run {result.run_id[:80]!r}, not {run}")
            head = result.snapshot.head if result.snapshot is not None else None
            start = start_commit(intent, self.base_sha)
            if start is not None and head is not None and head != start:
                raise InvalidInput(
                    f"run.json says the run started at {head[:40]!r}, not at {start}, "
                    "the commit its run job was told to check out"
                )
            if result.outcome == "success" or result.status == "completed":
                problems = self._recheck(fd, output, str(intent.args["skill"]), result)
                if problems:
                    claim = f"run.json claims {result.status}/{result.outcome} but "
                    raise InvalidInput(claim + "; ".join(problems)[:1500])
            return result
        finally:
            os.close(fd)

    def _recheck(self, fd: int, output: Path, skill: str, result: RunResult) -> list[str]:
        from holon.runner.artifacts import check_skill_artifacts, unmet_requirements
        from holon.runner.outputs import Findings, OutputDir
        from holon.runner.skills import bundle

        found = Findings()
        out = OutputDir(fd, output)
        manifest, manifest_error = out.read_manifest()
        problems: list[str] = []
        if manifest is None:
            problems.append(manifest_error or "no manifest")
        elif manifest.outcome != result.outcome:
            problems.append(f"its manifest says {manifest.outcome}")
        declared = self.catalog.get(skill)
        bundles = [bundle(declared)] if declared is not None else []
        check_skill_artifacts(out, bundles, found)
        problems.extend(found.violations)
        problems.extend(f"required artifact {path} is missing" for path in found.missing)
        if result.patch is not None and result.patch.path is not None:
            try:
                os.close(open_regular_at(fd, PATCH_FILE))  # only whether it is a plain file
            except FileNotFoundError:
                problems.append(f"{PATCH_FILE} is missing")
            except NotRegular as exc:
                problems.append(f"{PATCH_FILE}: {exc}")
        if result.outcome == "success":
            problems.extend(unmet_requirements(bundles, result.patch))
        return problems

    def _set_aside(self, output: Path) -> Path | None:
        """Move a refused output out of the runs dir's names: publishing reads `<run>` only."""
        aside = output.with_name(output.name + REFUSED_SUFFIX)
        try:
            os.rename(output, aside)
        except OSError:
            return None
        return aside


def _record(fd: int) -> RunResult:
    try:
        raw = read_regular_at(fd, RUN_RECORD_FILE, RECORD_LIMIT)
    except FileNotFoundError:
        raise InvalidInput("run.json is missing: the run never recorded a result") from None
    except NotRegular as exc:
        raise InvalidInput(f"run.json: {exc}") from None
    try:
        return RunResult.model_validate(jsonio.load_object(raw, RUN_RECORD_FILE))
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(RUN_RECORD_FILE, exc)) from None


__all__ = ["NO_OUTPUT", "CollectHandler"]
