"""Settle's intake: the run jobs' downloaded outputs (`HOLON_RUN_OUTPUTS`) into the runs dir.

`actions/download-artifact` puts each artifact `holon-run-a<workflow attempt>-<run>` in a
directory of that name. The workflow run's attempt is in the name because artifact names are
unique across a workflow run's attempts (a re-run uploading `holon-run-<run>` again would fail),
and a re-run of failed jobs leaves the run jobs that succeeded with their first attempt's
artifact: per run, the newest attempt up to this settle's own is taken, the older ones are
ignored (superseded), a later attempt's never.

Each taken one is copied (`safe_tree.copy_tree`: lstat walk, no links, devices or FIFOs, no
absolute or `..` names, bounded) into `<runs dir>/<run>`, only for a run this settle expects and
only when the runs dir holds no output of that run yet. What is refused is returned, run ->
reason, for the collector to settle as failed with that evidence; nothing here raises on a bad
artifact.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from holon.actions.run_bundle import valid_run_name
from holon.actions.safe_tree import Refused, copy_tree
from holon.fsutil import kind_of

ARTIFACT_PREFIX = "holon-run-"
_ARTIFACT = re.compile(r"holon-run-a([0-9]{1,6})-(.+)")


def artifact_name(run: str, attempt: int | str) -> str:
    """The run job's artifact for `run` in workflow attempt `attempt` (holon.yml says it too)."""
    return f"{ARTIFACT_PREFIX}a{attempt}-{run}"


@dataclass
class Intake:
    taken: list[str] = field(default_factory=list)  # runs now in the runs dir
    refused: dict[str, str] = field(default_factory=dict)  # run -> why
    ignored: list[str] = field(default_factory=list)  # one line per entry not taken


def take_run_outputs(
    source: Path | None,
    runs_dir: Path,
    expected: Collection[str] | None = None,
    *,
    attempt: int | str | None = None,
) -> Intake:
    """Copy the downloaded outputs in `source` into `runs_dir`; `expected`: the runs this
    settle collects (None: any well-named run); `attempt`: this settle's workflow attempt
    (None: any)."""
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
    most = int(attempt) if attempt is not None else None
    chosen: dict[str, tuple[int, str]] = {}  # run -> (attempt, artifact)
    for name in sorted(os.listdir(source)):
        match = _ARTIFACT.fullmatch(name)
        if match is None or not valid_run_name(match[2]):
            what = "not a run output artifact (holon-run-a<attempt>-<run>)"
            intake.ignored.append(f"{name[:80]!r}: {what}")
            continue
        number, run = int(match[1]), match[2]
        if expected is not None and run not in expected:
            intake.ignored.append(f"{name}: no deferred run of this settle is {run}")
            continue
        if most is not None and number > most:
            intake.ignored.append(f"{name}: of a later attempt than this settle's ({most})")
            continue
        older = chosen.get(run)
        if older is not None:
            stale = min(older, (number, name))
            intake.ignored.append(f"{stale[1]}: superseded by a later attempt's output")
            if stale == (number, name):
                continue
        chosen[run] = (number, name)
    for run, (_, name) in sorted(chosen.items()):
        dest = runs_dir / run
        if dest.exists() or dest.is_symlink():
            intake.ignored.append(f"{name}: the runs dir holds {run} already")
            continue
        runs_dir.mkdir(parents=True, exist_ok=True)
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


__all__ = ["ARTIFACT_PREFIX", "Intake", "artifact_name", "take_run_outputs"]
