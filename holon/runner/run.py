"""One Agent Contract run: prepare inputs and a snapshot, run the agent, judge and record it.

`run(RunRequest) -> RunResult` is the library call every later part (serve, the Action) uses.
Everything that can be checked without side effects is checked first, so bad input leaves nothing
behind; once the agent has run, the output directory holds its artifacts plus the runner's
`run.json` (and `run.log`, and `diff.patch` when the agent wrote none).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from holon.closure.derive import derive_closure
from holon.closure.record import ClosureRecord
from holon.closure.run_evidence import evidence_of_run
from holon.contract.layout import (
    CONTEXT_DIR,
    MANIFEST_FILE,
    PATCH_FILE,
    PROMPTS_DIR,
    RUN_LOG_FILE,
    RUN_RECORD_FILE,
    SPEC_FILE,
    AgentExit,
)
from holon.contract.manifest import Manifest, ManifestError, load_manifest
from holon.contract.spec import Spec
from holon.errors import HolonError, Interrupted, InvalidInput
from holon.fsutil import atomic_write_bytes, atomic_write_text
from holon.runner.backend import Backend, BackendOptions, Execution, HostPaths, Job, make_backend
from holon.runner.record import PatchInfo, RunResult, SnapshotInfo, judge
from holon.runner.snapshot import Snapshot, take_snapshot

DEFAULT_TIMEOUT = 30 * 60.0


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
    secrets: dict[str, SecretStr] = Field(default_factory=dict)
    network: str = "bridge"
    cpus: float | None = Field(default=None, gt=0)
    memory: str | None = None
    pull: str = "never"
    user: str | None = None
    include_ignored: bool = False
    keep_workspace: bool = False
    work_dir: Path | None = None
    run_id: str | None = None
    probe: bool = False

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


def _prepare_input(request: RunRequest, input_dir: Path) -> None:
    input_dir.mkdir()
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
    owned = backend is None  # a caller's backend stays open for its next run
    backend = backend or make_backend(request.runtime, request.backend_options())
    run_id = request.run_id or new_run_id()
    root = Path(tempfile.mkdtemp(prefix=f"holon-{run_id}-", dir=request.work_dir))
    output = request.output.absolute()
    created_output = False
    ran = False
    try:
        private = root / "runner"
        private.mkdir()
        # The engine check and the snapshot copy are independent; overlapping them saves start-up.
        with ThreadPoolExecutor(max_workers=1) as pool:
            checked = pool.submit(backend.preflight)
            snapshot = take_snapshot(
                request.workspace,
                root / "workspace",
                private / "git",
                include_ignored=request.include_ignored,
            )
            _prepare_input(request, root / "input")
            checked.result()
        if not output.exists():
            output.mkdir(parents=True)
            created_output = True
        paths = HostPaths(
            input=root / "input",
            workspace=snapshot.root,
            output=output,
            log=private / "agent.log",
            git_objects=snapshot.objects,
        )
        job = Job(
            run_id=run_id,
            paths=paths,
            env={
                **request.spec.context.env,
                **{k: v.get_secret_value() for k, v in request.secrets.items()},
            },
            timeout=request.effective_timeout(),
            probe=request.probe,
        )
        started = datetime.now(UTC)
        try:
            execution = backend.execute(job)
        except KeyboardInterrupt:
            ran = True
            notes = ["interrupted by the user"]
            interrupted = Execution(None, False, started, datetime.now(UTC), notes)
            _settle(request, backend, run_id, snapshot, paths, interrupted, "interrupted")
            raise Interrupted(f"interrupted; run record in {output / RUN_RECORD_FILE}") from None
        ran = True
        return _settle(request, backend, run_id, snapshot, paths, execution, None)
    except BaseException:
        if not ran:
            _undo_output(output, created_output)
        raise
    finally:
        if owned:
            backend.close()
        if not request.keep_workspace:
            shutil.rmtree(root, ignore_errors=True)


def _undo_output(output: Path, created: bool) -> None:
    """Leave no partial output when the agent never ran."""
    if created:
        shutil.rmtree(output, ignore_errors=True)
    elif output.is_dir():
        for child in output.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


def _collect_patch(snapshot: Snapshot, output: Path) -> PatchInfo:
    target = output / PATCH_FILE
    if target.is_file() and not target.is_symlink():
        return PatchInfo(path=str(target), source="agent", bytes=target.stat().st_size)
    try:
        patch = snapshot.diff()
    except HolonError as exc:
        return PatchInfo(path=None, source="none", error=str(exc))
    atomic_write_bytes(target, patch)
    return PatchInfo(path=str(target), source="runner", bytes=len(patch))


def _settle(
    request: RunRequest,
    backend: Backend,
    run_id: str,
    snapshot: Snapshot,
    paths: HostPaths,
    execution: Execution,
    forced_status: str | None,
) -> RunResult:
    output = paths.output
    notes = list(execution.notes)
    for name in (RUN_RECORD_FILE, RUN_LOG_FILE):
        if (output / name).exists():
            notes.append(f"the agent wrote {name}; replaced by the runner's own")
    if paths.log.exists():
        shutil.move(paths.log, output / RUN_LOG_FILE)

    manifest: Manifest | None = None
    manifest_error: str | None = None
    manifest_path = output / MANIFEST_FILE
    try:
        manifest = load_manifest(manifest_path)
    except ManifestError as exc:
        manifest_error = str(exc)
    except OSError as exc:
        manifest_error = f"{MANIFEST_FILE}: unreadable ({exc.strerror})"

    patch = _collect_patch(snapshot, output)
    missing = [
        a.path
        for a in request.spec.output.artifacts
        if a.required and not (output / a.path).exists()
    ]
    if manifest is not None:
        for artifact in manifest.artifacts:
            if not (output / artifact.path).exists():
                notes.append(f"manifest lists {artifact.path}, which is not in the output")

    timeout = request.effective_timeout()
    verdict = judge(
        agent_exit=execution.exit_code,
        timed_out=execution.timed_out,
        timeout=timeout,
        manifest=manifest,
        manifest_error=manifest_error,
        missing_required=missing,
    )
    status = verdict.status
    reason = verdict.reason
    exit_code = verdict.exit_code
    outcome = verdict.outcome
    if forced_status == "interrupted":
        status, outcome, exit_code = "interrupted", "failure", AgentExit.FAILURE
        reason = "interrupted by the user before the agent finished"
    if request.keep_workspace:
        notes.append(f"workspace kept at {snapshot.root}")

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
        missing_artifacts=missing,
        notes=notes,
        started_at=execution.started_at,
        ended_at=execution.ended_at,
        duration_seconds=round((execution.ended_at - execution.started_at).total_seconds(), 3),
    )
    closure = derive_closure(evidence_of_run(result))
    result = result.model_copy(update={"closure": ClosureRecord.of(closure)})
    atomic_write_text(output / RUN_RECORD_FILE, result.model_dump_json(indent=2) + "\n")
    return result
