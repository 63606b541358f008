"""One Agent Contract run: prepare inputs and a snapshot, run the agent, judge and record it.

`run(RunRequest) -> RunResult` is the library call every later part (serve, the Action) uses.
Everything that can be checked without side effects is checked first, so bad input leaves nothing
behind; once the agent has run, the output directory holds its artifacts plus the runner's
`run.json` (and `run.log`, and `diff.patch` when the agent wrote none).
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, SecretStr, TypeAdapter

from holon import gcpause
from holon.contract.layout import (
    CONTEXT_DIR,
    MANIFEST_FILE,
    PATCH_FILE,
    PROMPTS_DIR,
    RUN_LOG_FILE,
    RUN_RECORD_FILE,
    SKILLS_DIR,
    SPEC_FILE,
    AgentExit,
)
from holon.contract.spec import Spec
from holon.errors import HolonError, Interrupted, InvalidInput
from holon.fsutil import lstat_at, open_dir, remove_tree
from holon.held_signals import HeldSignals
from holon.runner.agent_log import DEFAULT_LOG_LIMIT, AgentLog
from holon.runner.backend import Backend, BackendOptions, Execution, HostPaths, Job, make_backend
from holon.runner.outputs import Findings, OutputDir, collect_patch
from holon.runner.snapshot import OBJECTS_LINK, Snapshot, take_snapshot
from holon.runner.timeline import mark
from holon.secrets import Redactor
from holon.validation import empty_dict, empty_list

if TYPE_CHECKING:
    from holon.runner.record import RunResult
    from holon.runner.skills import SkillBundle
    from holon.skills.catalog import Skill

DEFAULT_TIMEOUT = 30 * 60.0


def _load_settling() -> None:
    """Import what judging and recording a run needs (the record's models, the closure's,
    the manifest's): done beside the agent, while the main thread waits for it, not after."""
    import holon.closure.derive
    import holon.runner.artifacts
    import holon.runner.evidence
    import holon.runner.output_redaction
    import holon.runner.record
    import holon.runner.redaction  # noqa: F401


def _load_quietly() -> None:
    # A failure here is raised again, where it belongs, by the main thread's own import.
    with contextlib.suppress(Exception):
        _load_settling()
    # `holon run` keeps the collector paused through its start-up (imports, models, snapshot:
    # long-lived objects, next to no garbage) until this is loaded too (holon/gcpause.py); a
    # no-op for any other caller.
    gcpause.resume()


class _Removal:
    """The run's directories removed in a thread while the run is settled: each part as soon as
    nothing reads it any more (the agent has stopped: nothing writes there either). `finish`
    waits for that and removes whatever is left, so the run still ends with them gone."""

    def __init__(self) -> None:
        self._last: threading.Thread | None = None

    def start(self, *paths: Path) -> None:
        # One after the other: two walks of one tree would trip over each other's removals.
        thread = threading.Thread(
            target=self._remove, args=(self._last, paths), name="holon-remove", daemon=True
        )
        thread.start()
        self._last = thread

    @staticmethod
    def _remove(before: threading.Thread | None, paths: tuple[Path, ...]) -> None:
        if before is not None:
            before.join()
        for path in paths:
            remove_tree(path)

    def finish(self, *paths: Path) -> None:
        if self._last is not None:
            self._last.join()
        for path in paths:
            remove_tree(path)  # not shutil.rmtree: the agent chooses the depth of the workspace


class _Diff:
    """The runner's patch (`Snapshot.diff`) taken in a thread from the moment the agent is gone
    (nothing writes the snapshot any more), beside the reading of its log and manifest: not when
    the agent left a diff.patch of its own (then the runner's is not asked for). `result` gives
    it, or raises what taking it raised; `join` waits for it (its git writes in the runner's
    directory, which the run removes)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._patch = b""
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._take, name="holon-diff", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, snapshot: Snapshot, out: OutputDir) -> _Diff | None:
        try:
            st = lstat_at(out.fd, PATCH_FILE)
        except OSError:
            # The agent left its output unreadable (mode 000): the settle takes the output back
            # first and then decides, and takes the runner's patch itself if it needs one.
            return None
        return None if st is not None and stat.S_ISREG(st.st_mode) else cls(snapshot)

    def _take(self) -> None:
        try:
            self._patch = self._snapshot.diff()
        except BaseException as exc:
            self._error = exc

    def result(self) -> bytes:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._patch

    def join(self) -> None:
        self._thread.join()


class _Loading:
    """`_load_settling`, done once: in the calling thread while the engine starts the agent
    (`Job.while_starting`: the process is idle then), else in a thread started once the agent
    runs (`Job.on_start`: not before, so the main thread starts the agent, and takes hold of it,
    without competing for the interpreter), joined before the main thread imports any of it
    (two threads importing one cycle of modules could each be handed the other's half-made
    one)."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._done = False

    def here(self) -> None:
        if self._thread is None and not self._done:
            self._done = True
            _load_quietly()

    def start(self) -> None:
        if self._thread is None and not self._done:
            self._thread = threading.Thread(target=_load_quietly, name="holon-load", daemon=True)
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()


@cache
def _skill_list() -> TypeAdapter[list[Skill]]:
    from holon.skills.catalog import Skill

    return TypeAdapter(list[Skill])


def _skills(value: Any) -> Any:
    """`list[Skill]` validated by the skill models, loaded only for a run given skills: most
    runs have none, and need not load the catalog before their agent starts."""
    if isinstance(value, list) and not value:
        return []
    return _skill_list().validate_python(value)


if TYPE_CHECKING:
    Skills = list[Skill]
else:
    Skills = Annotated[list[Any], PlainValidator(_skills)]


class RunRequest(BaseModel):
    """Everything one run needs. Secrets are kept as SecretStr so they never print."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: Spec
    workspace: Path
    output: Path
    runtime: str = "docker"
    image: str | None = None
    agent: list[str] | None = None
    context: Path | None = None
    system_prompt: str | None = None
    user_prompt: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    secrets: dict[str, SecretStr] = Field(default_factory=empty_dict)
    network: str | None = None  # None: the runtime's default (docs/security.md)
    cpus: float | None = Field(default=None, gt=0)
    memory: str | None = None
    pull: str = "never"
    user: str | None = None
    # Model tokens a run may spend through the key proxy (input and output); None: no cap.
    model_tokens: int | None = Field(default=None, gt=0)
    # False: the model key goes to the agent (an agent that calls its model itself, not through
    # HOLON_MODEL_PROXY); a docker run's network default then stays `bridge`.
    model_proxy: bool = True
    include_ignored: bool = False
    keep_workspace: bool = False
    work_dir: Path | None = None
    run_id: str | None = None
    probe: bool = False
    log_limit: int = Field(default=DEFAULT_LOG_LIMIT, gt=0)
    # The skills the run uses (resolved by the caller: `skills.resolve`): copied to
    # <input>/skills/<name>/ for the agent, their artifacts and requirements checked after it.
    skills: Skills = Field(default_factory=empty_list)

    def effective_timeout(self) -> float:
        return self.timeout or self.spec.constraints.timeout or DEFAULT_TIMEOUT

    def backend_options(self) -> BackendOptions:
        return BackendOptions(
            image=self.image,
            agent=self.agent,
            network=self.network,
            cpus=self.cpus,
            memory=self.memory,
            pull=self.pull,
            user=self.user,
            model_tokens=self.model_tokens,
            model_proxy=self.model_proxy,
        )


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def _check_inputs(request: RunRequest) -> None:
    if not request.workspace.is_dir():
        raise InvalidInput(f"workspace is not a directory: {request.workspace}")
    out = request.output
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise InvalidInput(f"output path exists and is not a directory: {out}")
        if any(out.iterdir()):
            raise InvalidInput(f"output directory is not empty: {out}")
    if request.context is not None and not request.context.is_dir():
        raise InvalidInput(f"context is not a directory: {request.context}")
    for name in request.secrets:
        if name.startswith("HOLON_"):
            raise InvalidInput(f"secret name {name} is reserved for the runner")


def _bundles(request: RunRequest) -> list[SkillBundle]:
    names = [skill.name for skill in request.skills]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InvalidInput(f"skill {twice[0]} is given twice; a run uses each skill once")
    if not request.skills:
        return []
    from holon.runner.skills import bundle

    return [bundle(skill) for skill in request.skills]


def _fill_input(request: RunRequest, input_dir: Path, bundles: list[SkillBundle]) -> None:
    """What the agent reads in `input_dir`, made empty before the snapshot: written in the
    pool's thread once the container's create went out (`ready` in `run`), while the snapshot is
    taken, not before either of them."""
    if bundles:
        from holon.runner.skills import write_bundles

        write_bundles(input_dir / SKILLS_DIR, bundles)
    (input_dir / SPEC_FILE).write_text(request.spec.to_yaml(), encoding="utf-8")
    context = input_dir / CONTEXT_DIR
    if request.context is not None:
        proc = subprocess.run(
            ["cp", "-a", "--reflink=auto", "--", f"{request.context}/.", str(context)],
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise InvalidInput(f"cannot copy context {request.context}: cp failed")
    else:
        context.mkdir()
    prompts = {"system.md": request.system_prompt, "user.md": request.user_prompt}
    if any(text is not None for text in prompts.values()):
        (input_dir / PROMPTS_DIR).mkdir()
        for name, text in prompts.items():
            if text is not None:
                (input_dir / PROMPTS_DIR / name).write_text(text, encoding="utf-8")


def run(request: RunRequest, *, backend: Backend | None = None) -> RunResult:
    """Run one agent under the contract and return (and record) its judged result."""
    _check_inputs(request)
    bundles = _bundles(request)
    owned = backend is None  # a caller's backend stays open for its next run
    backend = backend or make_backend(request.runtime, request.backend_options())
    run_id = request.run_id or new_run_id()
    root = Path(tempfile.mkdtemp(prefix=f"holon-{run_id}-", dir=request.work_dir))
    # The runner's own state sits beside the run root, never under it: nothing reached through
    # the snapshot (a `..`, a link, a mount) leads to the git directory Holon diffs with.
    private = Path(tempfile.mkdtemp(prefix=f"holon-{run_id}-runner-", dir=request.work_dir))
    output = request.output.absolute()
    created_output = False
    ran = False
    out_fd: int | None = None
    log: AgentLog | None = None
    early: Job | None = None  # the job the backend was asked to prepare for
    diff: _Diff | None = None
    preparing: list[Future[None]] = []
    loading = _Loading()
    removal = _Removal()
    kept = () if request.keep_workspace else (root,)

    def agent_done() -> None:
        # What the agent was given (the input, the borrowed objects) goes while it is judged.
        if not request.keep_workspace:
            removal.start(root / "input", root / OBJECTS_LINK)

    def patch_taken() -> None:
        # The snapshot and the runner's state go once the patch is taken.
        removal.start(private, *kept)

    try:
        # The engine check and the snapshot copy are independent; overlapping them saves start-up.
        with ThreadPoolExecutor(max_workers=1) as pool:
            checked = pool.submit(backend.preflight)
            # Where the agent's container mounts them, the output and the input exist before the
            # snapshot is taken: the container can then be created beside it (`prepare`).
            if not output.exists():
                try:
                    output.mkdir(parents=True)
                except OSError as exc:
                    # Where the output cannot go is the caller's input (a file on the path, /proc).
                    raise InvalidInput(
                        f"cannot create output directory {output}: {exc.strerror or exc}"
                    ) from exc
                created_output = True
            # Opened before the agent runs: whatever it does to the path, Holon's lookups stay here.
            out_fd = open_dir(output)
            out = OutputDir(out_fd, output)
            (root / "input").mkdir()  # filled below, once the create is under way
            log = agent_log = AgentLog(
                private / "agent.log", request.log_limit, _all_secrets(request)
            )
            env = {
                **request.spec.context.env,
                **{k: v.get_secret_value() for k, v in request.secrets.items()},
            }

            def job_for(workspace: Path, objects: Path | None) -> Job:
                paths = HostPaths(
                    input=root / "input", workspace=workspace, output=output, git_objects=objects
                )
                return Job(
                    run_id=run_id,
                    paths=paths,
                    env=env,
                    timeout=request.effective_timeout(),
                    log=agent_log,
                    probe=request.probe,
                    on_start=loading.start,
                    while_starting=loading.here,
                )

            prepare = getattr(backend, "prepare", None)
            filling: list[Future[None]] = []

            def ready(workspace: Path, objects: Path | None) -> None:
                # The snapshot's directories exist: the engine check done, the backend may create
                # the agent's container now, in the pool's thread, while the snapshot is filled.
                nonlocal early
                if prepare is not None:
                    early = job_for(workspace, objects)
                    preparing.append(pool.submit(_prepare_after, checked, prepare, early))
                # Then the input the agent reads is written there too, off this thread's way.
                filling.append(pool.submit(_fill_input, request, root / "input", bundles))

            snapshot = take_snapshot(
                request.workspace,
                root / "workspace",
                private / "git",
                include_ignored=request.include_ignored,
                on_ready=ready,
            )
            mark("snapshot taken")
            if filling:
                filling[0].result()
            else:  # the snapshot never told its directories (a test's stand-in)
                _fill_input(request, root / "input", bundles)
            checked.result()
            mark("preflight done")
        job = job_for(snapshot.root, snapshot.objects)
        if early is not None and early.paths == job.paths:
            job = early  # the job the backend prepared for (another is not run: `unprepare`)
        started = datetime.now(UTC)
        try:
            execution = backend.execute(job)
        except KeyboardInterrupt:
            ran = True
            notes = ["interrupted by the user"]
            interrupted = Execution(None, False, started, datetime.now(UTC), notes)
            agent_done()
            loading.join()
            _settle(
                request,
                backend,
                run_id,
                snapshot,
                out,
                log,
                interrupted,
                "interrupted",
                bundles,
                patch_taken,
            )
            raise Interrupted(f"interrupted; run record in {output / RUN_RECORD_FILE}") from None
        ran = True
        mark("executed")
        diff = _Diff.start(snapshot, out)
        agent_done()
        loading.join()
        mark("settling loaded")
        return _settle(
            request,
            backend,
            run_id,
            snapshot,
            out,
            log,
            execution,
            None,
            bundles,
            patch_taken,
            diff,
        )
    except BaseException:
        if not ran:
            _undo_output(output, created_output)
        raise
    finally:
        try:
            _unprepare(backend, preparing)
        finally:
            if diff is not None:
                diff.join()  # its git writes in the runner's directory, removed below
            loading.join()
            if log is not None:
                log.close()
                log.release()
            if out_fd is not None:
                os.close(out_fd)
            if owned:
                backend.close()
            removal.finish(private, *kept)


def _unprepare(backend: Backend, preparing: list[Future[None]]) -> None:
    """What the backend prepared and did not run goes (once its preparation is over), whatever
    signal comes meanwhile (delivered afterwards: the rest of the clean-up is the caller's)."""
    if not preparing:
        return
    with HeldSignals():
        futures_wait(preparing)
        unprepare = getattr(backend, "unprepare", None)
        if unprepare is not None:
            unprepare()


def _prepare_after(checked: Future[None], prepare: Callable[[Job], None], job: Job) -> None:
    """`prepare(job)`, once the engine check (`checked`, done before: one worker) passed."""
    if checked.exception() is None:
        prepare(job)


def _undo_output(output: Path, created: bool) -> None:
    """Leave no partial output when the agent never ran."""
    if created:
        remove_tree(output)
    elif output.is_dir():
        for child in output.iterdir():
            if child.is_dir() and not child.is_symlink():
                remove_tree(child)  # an agent that started may have written any depth there
            else:
                child.unlink(missing_ok=True)


def _settle(
    request: RunRequest,
    backend: Backend,
    run_id: str,
    snapshot: Snapshot,
    out: OutputDir,
    log: AgentLog,
    execution: Execution,
    forced_status: str | None,
    bundles: list[SkillBundle],
    patch_taken: Callable[[], None],
    diff: _Diff | None = None,
) -> RunResult:
    from holon.closure.derive import derive_closure
    from holon.closure.record import ClosureRecord
    from holon.runner.artifacts import check_skill_artifacts, unmet_requirements
    from holon.runner.evidence import evidence_of_run
    from holon.runner.output_redaction import context_tokens, redact_output_files
    from holon.runner.record import RunResult, SnapshotInfo, judge
    from holon.runner.redaction import redact_record

    output = out.path
    found = Findings(notes=list(execution.notes))
    secrets = _secret_redactors(request)
    out.reclaim()
    for name in (RUN_RECORD_FILE, RUN_LOG_FILE):
        out.make_way(name, found)
    log_info = log.close().model_copy(update={"path": str(output / RUN_LOG_FILE)})
    out.place(RUN_LOG_FILE, log.kept())
    mark("run.log placed")
    manifest, manifest_error = out.read_manifest()
    manifest_path = output / MANIFEST_FILE
    diff_failed: list[str] = []

    def runner_patch() -> bytes:
        try:
            return snapshot.diff() if diff is None else diff.result()
        except HolonError as exc:
            diff_failed.append(str(exc))
            raise

    patch = collect_patch(out, runner_patch, secrets, found)
    if diff is not None:
        diff.join()  # not asked for (the agent's diff.patch): still done before the removal
    mark("patch taken")
    patch_taken()
    # The output directory is published (the runs artifact): no forwarded value in any form.
    shown = context_tokens(request.context, request.spec.to_yaml())  # what it may say again
    replaced = redact_output_files(out.fd, _all_secrets(request), also=shown)
    if replaced:
        found.notes.append(f"{replaced} occurrence(s) of forwarded secrets redacted in the output")
    if diff_failed:
        # Success without diff.patch would drop the agent's changes silently.
        found.violations.append(f"the workspace changes cannot be recorded ({diff_failed[0]})")
    out.check_artifacts(request.spec.output.artifacts, manifest, found)
    check_skill_artifacts(out, bundles, found)

    timeout = request.effective_timeout()
    verdict = judge(
        agent_exit=execution.exit_code,
        timed_out=execution.timed_out,
        timeout=timeout,
        manifest=manifest,
        manifest_error=manifest_error,
        missing_required=found.missing,
        violations=found.violations,
        runtime_error=execution.error,
        unmet=unmet_requirements(bundles, patch),
    )
    status = verdict.status
    reason = verdict.reason
    exit_code = verdict.exit_code
    outcome = verdict.outcome
    if forced_status == "interrupted":
        status, outcome, exit_code = "interrupted", "failure", AgentExit.FAILURE
        reason = "interrupted by the user before the agent finished"
    if request.keep_workspace:
        found.notes.append(f"workspace kept at {snapshot.root}")

    def record(notes: list[str]) -> RunResult:
        result = RunResult(
            run_id=run_id,
            runtime=backend.name,
            image=request.image if backend.name == "docker" else None,
            agent=request.agent,
            probe=request.probe,
            status=status,
            outcome=outcome,
            exit_code=exit_code,
            reason=reason,
            agent_exit_code=execution.exit_code,
            output_path=str(output),
            manifest_path=str(manifest_path) if manifest is not None else None,
            manifest=manifest,
            snapshot=SnapshotInfo(
                source=str(snapshot.source),
                kind=snapshot.kind,
                head=snapshot.head,
                branch=snapshot.branch,
                start_tree=snapshot.start_tree,
                files=snapshot.files,
                include_ignored=snapshot.include_ignored,
            ),
            patch=patch,
            missing_artifacts=found.missing,
            violations=found.violations,
            log=log_info,
            notes=notes,
            started_at=execution.started_at,
            ended_at=execution.ended_at,
            duration_seconds=round((execution.ended_at - execution.started_at).total_seconds(), 3),
            model_usage=execution.model_usage,
        )
        closure = derive_closure(evidence_of_run(result))
        result = result.model_copy(update={"closure": ClosureRecord.of(closure)})
        return redact_record(result, secrets)

    # Built while the container's removal (docker) is still under way; built again with its
    # notes in the rare case it has any.
    result = record(list(found.notes))
    text = _record_text(result)
    if execution.cleanup is not None:
        removed = execution.cleanup()
        if removed:
            found.notes.extend(removed)
            result = record(found.notes)
            text = _record_text(result)
    mark("container removal joined")
    # The way was cleared above and the agent is gone: the rename replaces what is left unfollowed.
    out.place(RUN_RECORD_FILE, [text])
    mark("record written")
    return result


def _record_text(result: RunResult) -> bytes:
    return (result.model_dump_json(indent=2) + "\n").encode()


def _all_secrets(request: RunRequest) -> Redactor:
    return Redactor(v.get_secret_value() for v in request.secrets.values())


def _secret_redactors(request: RunRequest) -> dict[str, Redactor]:
    redactors = {n: Redactor([v.get_secret_value()]) for n, v in request.secrets.items()}
    return {name: redactor for name, redactor in redactors.items() if redactor}
