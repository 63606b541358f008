"""Where serve's skill runs write their outputs (patches, agent logs, manifests, run records).

Never inside the state directory: a state directory is cached and uploaded (Actions), and run
outputs must not ride along with it. The default is fixed by the state directory, so a restarted
serve finds the output of a run it was in the middle of (crash recovery reads it back).
"""

from __future__ import annotations

from pathlib import Path

from holon.errors import InvalidInput

SUFFIX = ".runs"


def runs_dir_of(state_dir: Path, runs_dir: Path | None) -> Path:
    """`runs_dir`, else `<state-dir>.runs` beside the state directory; InvalidInput for one
    inside the state directory."""
    state = state_dir.resolve()
    if runs_dir is not None:
        runs = runs_dir.resolve()
    elif state.name:
        runs = state.with_name(state.name + SUFFIX)
    else:
        raise InvalidInput(
            f"--state-dir {state} has no sibling for skill-run outputs: use --runs-dir"
        )
    if runs == state or runs.is_relative_to(state):
        raise InvalidInput(
            f"--runs-dir {runs} is inside the state directory {state}: skill-run outputs "
            "must not be saved with the state"
        )
    return runs


__all__ = ["SUFFIX", "runs_dir_of"]
