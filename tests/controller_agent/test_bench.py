"""`bench.decider` keeps working (its targets are judged only in a full run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import decider


def test_decider_benchmark_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert decider.main(["--smoke", "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "agent decider" in out
    assert "prior events" in out
    assert "NOT JUDGED (smoke run)" in out


def test_the_context_does_not_grow_with_the_history(tmp_path: Path) -> None:
    policy = decider.parse_policy(decider.POLICY)
    small = sum(decider.context_size(policy, 10, tmp_path))
    large = sum(decider.context_size(policy, 10_000, tmp_path))
    assert large <= small * (1 + decider.CONTEXT_SLACK)
