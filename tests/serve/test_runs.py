"""holon/serve/runs.py: skill-run outputs go beside the state directory, never inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from holon.errors import InvalidInput
from holon.serve.runs import runs_dir_of


def test_the_default_is_beside_the_state_directory(tmp_path: Path) -> None:
    assert runs_dir_of(tmp_path / ".holon", None) == tmp_path / ".holon.runs"
    assert runs_dir_of(tmp_path / "s" / ".." / "s", None) == tmp_path / "s.runs"


def test_a_named_runs_dir_is_taken_as_it_is(tmp_path: Path) -> None:
    assert runs_dir_of(tmp_path / "s", tmp_path / "elsewhere") == tmp_path / "elsewhere"


def test_a_link_into_the_state_directory_is_inside_it(tmp_path: Path) -> None:
    state = tmp_path / "s"
    (state / "runs").mkdir(parents=True)
    (tmp_path / "outside").symlink_to(state / "runs")
    with pytest.raises(InvalidInput, match="is inside the state directory"):
        runs_dir_of(state, tmp_path / "outside")


def test_the_root_has_no_sibling() -> None:
    with pytest.raises(InvalidInput, match="use --runs-dir"):
        runs_dir_of(Path("/"), None)
