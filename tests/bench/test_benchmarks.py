"""The benchmarks still run: each once at tiny size. Times are not judged here (smoke mode)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import docker_run, snapshot


def test_snapshot_benchmark_runs(tmp_path: Path) -> None:
    assert snapshot.main(["--smoke", "--work-dir", str(tmp_path)]) == 0


@pytest.mark.docker
def test_docker_run_benchmark_runs(agent_image: str, tmp_path: Path) -> None:
    # The session image fixture skips (or fails under HOLON_REQUIRE_DOCKER=1) without an engine.
    assert docker_run.main(["--smoke", "--image", agent_image, "--work-dir", str(tmp_path)]) == 0
