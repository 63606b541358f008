"""The runner's own record of a run (`run.json`) and the verdict rules that fill it.

The verdict is pure: given how the agent exited and what its manifest says, it decides the run's
status, outcome and contract exit code. The agent's word is checked, not trusted: a manifest that
claims success while the process failed, or that still says "running", is a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from holon.closure.record import ClosureRecord
from holon.contract.layout import AgentExit
from holon.contract.manifest import Manifest, ManifestOutcome

RunStatus = Literal["completed", "failed", "timed_out", "interrupted"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SnapshotInfo(_Record):
    """Where the agent's workspace came from: its recorded starting point."""

    source: str
    kind: Literal["git", "directory"]
    head: str | None = Field(description="The commit checked out in the original, if any.")
    branch: str | None
    start_tree: str = Field(
        description="Git tree of the snapshot at the start (incl. local edits)."
    )
    files: int
    include_ignored: bool


class PatchInfo(_Record):
    path: str | None = Field(description="diff.patch in the output directory, when there is one.")
    source: Literal["agent", "runner", "none"]
    bytes: int = 0
    error: str | None = None


class LogInfo(_Record):
    """What `run.log` holds of the agent's output: where it was cut and what was redacted."""

    path: str | None = Field(description="run.log in the output directory.")
    bytes: int = Field(description="Bytes the agent printed (after redaction).")
    kept_bytes: int = Field(description="Bytes of it kept in run.log (the cut marker excluded).")
    limit: int = Field(description="The cap: its first half and its last half are kept.")
    cut_at: int | None = Field(
        default=None, description="Offset in run.log of the marker line where output was cut."
    )
    cut_bytes: int = Field(default=0, description="Bytes dropped at cut_at.")
    redactions: int = Field(
        default=0, description="Occurrences of forwarded secret values replaced by '***'."
    )


class ModelUsage(_Record):
    """What the model provider reported through the key proxy for a run: measured on the host,
    so the agent cannot understate it."""

    input_tokens: int = Field(ge=0, description="Input tokens, prompt-cache tokens included.")
    output_tokens: int = Field(ge=0)
    requests: int = Field(ge=0, description="Requests the proxy forwarded to the provider.")
    model: str | None = Field(description="The model the last answer named.")


class RunResult(_Record):
    """What `run()` returns and what `run.json` holds."""

    run_id: str
    runtime: str
    image: str | None = None
    agent: list[str] | None = None
    probe: bool = False
    status: RunStatus
    outcome: ManifestOutcome
    exit_code: AgentExit
    reason: str
    agent_exit_code: int | None
    output_path: str
    manifest_path: str | None
    manifest: Manifest | None
    snapshot: SnapshotInfo | None
    patch: PatchInfo | None
    missing_artifacts: list[str] = Field(default_factory=list)
    violations: list[str] = Field(
        default_factory=list,
        description="Contract violations found in the output (each fails the run).",
    )
    log: LogInfo | None = None
    secrets_redacted: list[str] = Field(
        default_factory=list,
        description="Names of forwarded secrets whose values were replaced by '***' in this record"
        " or in run.log.",
    )
    notes: list[str] = Field(default_factory=list)
    started_at: datetime
    ended_at: datetime
    duration_seconds: float
    closure: ClosureRecord | None = Field(
        default=None, description="The run's derived closure and lifecycle (Result Closure)."
    )
    model_usage: ModelUsage | None = Field(
        default=None,
        description="Model usage metered by the key proxy (docker runs given a model key).",
    )


@dataclass(frozen=True)
class Verdict:
    status: RunStatus
    outcome: ManifestOutcome
    exit_code: AgentExit
    reason: str


def _fail(reason: str, status: RunStatus = "failed") -> Verdict:
    return Verdict(status, "failure", AgentExit.FAILURE, reason)


def judge(
    *,
    agent_exit: int | None,
    timed_out: bool,
    timeout: float,
    manifest: Manifest | None,
    manifest_error: str | None,
    missing_required: list[str],
    violations: Sequence[str] = (),
    runtime_error: str | None = None,
    unmet: Sequence[str] = (),
) -> Verdict:
    """Decide a run's result from runtime evidence (RFC-0002 sections 3.3, 4, 4.1).

    `unmet` is what the run's skills require that it does not show (a change); like a missing
    required artifact, it fails only a run that claims success: an honest failure or question
    stays what it is."""
    if timed_out:
        return _fail(
            f"timed out after {timeout:g}s; the agent and its processes were killed", "timed_out"
        )
    if runtime_error is not None:
        return _fail(f"the runtime failed: {runtime_error}")
    if manifest is None:
        return _fail(f"invalid run: {manifest_error or 'manifest.json missing'}")
    if violations:
        return _fail("contract violation: " + "; ".join(violations))
    if manifest.status == "running":
        return _fail("the agent exited while its manifest still says status=running")
    if manifest.outcome == "needs_human":
        # Exit 1 with needs_human is the contract's fallback for agents without exit code 2.
        if agent_exit in (AgentExit.SUCCESS, AgentExit.FAILURE, AgentExit.NEEDS_HUMAN):
            question = f": {manifest.question.text}" if manifest.question else ""
            return Verdict(
                "completed", "needs_human", AgentExit.NEEDS_HUMAN, f"needs human review{question}"
            )
        return _fail(f"agent exited with {agent_exit} while its manifest says needs_human")
    if manifest.outcome == "failure" or manifest.status == "failed":
        detail = f": {manifest.error}" if manifest.error else ""
        return _fail(f"the agent reported failure{detail}")
    # The manifest claims success; the process must agree.
    if agent_exit == AgentExit.NEEDS_HUMAN:
        return Verdict(
            "completed",
            "needs_human",
            AgentExit.NEEDS_HUMAN,
            "agent exited 2 (needs human review) although its manifest says success",
        )
    if agent_exit != AgentExit.SUCCESS:
        return _fail(f"agent exited with {agent_exit} although its manifest says success")
    if missing_required:
        return _fail("required artifact(s) missing: " + ", ".join(missing_required))
    if unmet:
        return _fail("; ".join(unmet))
    return Verdict("completed", "success", AgentExit.SUCCESS, "completed successfully")
