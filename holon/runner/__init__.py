"""The Agent Contract runner: `run(RunRequest) -> RunResult`, used by every part of Holon."""

from holon.runner.probe import probe
from holon.runner.record import RunResult, SnapshotInfo
from holon.runner.run import RunRequest, run

__all__ = ["RunRequest", "RunResult", "SnapshotInfo", "probe", "run"]
