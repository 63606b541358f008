"""Settle's intake: the run jobs' downloaded outputs (`HOLON_RUN_OUTPUTS`) into the runs dir.

`actions/download-artifact` puts each artifact `holon-run-<run>` in a directory of that name.
Each is copied (`safe_tree.copy_tree`: lstat walk, no links, devices or FIFOs, no absolute or
`..` names, bounded) into `<runs dir>/<run>`, only for a run this settle expects and only when
the runs dir holds no output of that run yet. What is refused is returned, run -> reason, for
the collector to settle as failed with that evidence; nothing here raises on a bad artifact.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from holon.actions.run_bundle import valid_run_name
from holon.actions.safe_tree import Refused, copy_tree
from holon.fsutil import kind_of

ARTIFACT_PREFIX = "holon-run-"


@dataclass
class Intake:
    taken: list[str] = field(default_factory=list)  # runs now in the runs dir
    refused: dict[str, str] = field(default_factory=dict)  # run -> why
    ignored: list[str] = field(default_factory=list)  # one line per entry not taken


def take_run_outputs(
    source: Path | None, runs_dir: Path, expected: Collection[str] | None = None
) -> Intake:
    """Copy the downloaded outputs in `source` into `runs_dir`; `expected`: the runs this
    settle collects (None: any well-named run)."""
    intake = Intake()
    if source is None:
        return intake
    try:
        st = os.stat(source, follow_symlinks=False)
    except FileNotFoundError:
        return intake  # no run job uploaded anything (all cancelled): each run is collected absent
    if not stat.S_ISDIR(st.st_mode):
        intake.ignored.append(f"{source}: {kind_of(st)}, not a directory of run outputs")
        return intake
    runs_dir.mkdir(parents=True, exist_ok=True)
    for name in sorted(os.listdir(source)):
        run = name.removeprefix(ARTIFACT_PREFIX)
        if not name.startswith(ARTIFACT_PREFIX) or not valid_run_name(run):
            intake.ignored.append(f"{name[:80]!r}: not a run output artifact (holon-run-<run>)")
            continue
        if expected is not None and run not in expected:
            intake.ignored.append(f"{name}: no deferred run of this settle is {run}")
            continue
        dest = runs_dir / run
        if dest.exists() or dest.is_symlink():
            intake.ignored.append(f"{name}: the runs dir holds {run} already")
            continue
        try:
            copy_tree(source / name, dest)
        except Refused as exc:
            intake.refused[run] = f"the run job's output is refused: {exc}"
            continue
        except OSError as exc:
            intake.refused[run] = f"the run job's output cannot be read: {exc.strerror or exc}"
            continue
        intake.taken.append(run)
    return intake


__all__ = ["ARTIFACT_PREFIX", "Intake", "take_run_outputs"]
