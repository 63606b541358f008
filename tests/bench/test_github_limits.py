"""bench.github judges calls against docs/github.md's "Calls per effect" table: its copy of the
bold figures must be the table's."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.github_limits import DOCUMENTED, docs_table, figure

DOCS = Path(__file__).resolve().parents[2] / "docs/github.md"


def test_the_benchmark_documents_what_the_docs_table_says() -> None:
    assert docs_table(DOCS.read_text()) == DOCUMENTED


def test_figures_are_evaluated_with_the_patch_values() -> None:
    assert figure("10 + k + b", {"k": 1, "b": 0}) == 11
    assert figure("2", {}) == 2
    with pytest.raises(ValueError, match="not a documented figure"):
        figure("2 or 3", {})
