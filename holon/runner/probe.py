"""Probe mode (RFC-0002 section 3.6): is this agent ready, without invoking its engine?

The agent runs with `--probe` against an empty workspace; it passes only when it exits 0 and leaves
a valid manifest reporting success, which proves it read the spec and could write its output.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from holon.contract.spec import Spec
from holon.runner.run import RunRequest, run

if TYPE_CHECKING:
    from holon.runner.record import RunResult

PROBE_SPEC = Spec.model_validate(
    {"version": "v1", "kind": "Holon", "goal": {"description": "probe: readiness check only"}}
)


def probe(request: RunRequest) -> RunResult:
    """Run `request` in probe mode against an empty scratch workspace (its workspace is unused)."""
    with tempfile.TemporaryDirectory(prefix="holon-probe-") as scratch:
        workspace = Path(scratch) / "workspace"
        workspace.mkdir()
        probed = request.model_copy(
            update={
                "probe": True,
                "workspace": workspace,
                "timeout": request.timeout or 60.0,
            }
        )
        return run(probed)
