"""The Agent Contract runner: `run(RunRequest) -> RunResult`, used by every part of Holon.

The run record's models (`record.py`, with the closure's) load on first use (PEP 562): `holon
run` loads them beside the container, while the agent starts (`run.py`), not before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from holon.runner.probe import probe
from holon.runner.run import RunRequest, run

if TYPE_CHECKING:
    from holon.runner.record import RunResult, SnapshotInfo

__all__ = ["RunRequest", "RunResult", "SnapshotInfo", "probe", "run"]


def __getattr__(name: str) -> Any:
    if name in ("RunResult", "SnapshotInfo"):
        from holon.runner import record

        return getattr(record, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
