"""The benchmarks still run: each once at tiny size. Times are not judged here (smoke mode)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import agent, closure, docker_run, gateway, github, listener, serve, snapshot
from holon.agent.conversation import ModelTurn


def test_snapshot_benchmark_runs(tmp_path: Path) -> None:
    assert snapshot.main(["--smoke", "--work-dir", str(tmp_path)]) == 0
    assert snapshot.main(["--smoke", "--loose", "--work-dir", str(tmp_path)]) == 0


@pytest.mark.docker
def test_docker_run_benchmark_runs(agent_image: str, tmp_path: Path) -> None:
    # The session image fixture skips (or fails under HOLON_REQUIRE_DOCKER=1) without an engine.
    assert docker_run.main(["--smoke", "--image", agent_image, "--work-dir", str(tmp_path)]) == 0


def test_closure_benchmark_runs() -> None:
    assert closure.main(["--smoke"]) == 0


def test_closure_benchmark_puts_the_deciding_item_last() -> None:
    items = closure.make_items(50)
    assert len(items) == 50
    assert items[-1]["id"] == "decider"
    assert all(item["kind"] != "run" for item in items[:-1])


def test_gateway_benchmark_runs() -> None:
    assert gateway.main(["--smoke"]) == 0


def test_serve_benchmark_runs(tmp_path: Path) -> None:
    # `--work-dir` may name a directory not made yet, as `python -m bench --work-dir` allows.
    work = tmp_path / "not" / "yet"
    assert serve.main(["--smoke", "--work-dir", str(work)]) == 0
    assert work.is_dir()
    assert list(work.iterdir()) == []  # its own scratch directory removed


def test_listener_benchmark_runs(tmp_path: Path) -> None:
    assert listener.main(["--smoke", "--work-dir", str(tmp_path)]) == 0


def test_github_benchmark_runs_and_meets_the_documented_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Quick mode judges the calls and the retries (exit 1 on a FAIL), not the CPU.
    assert github.main(["--smoke", "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASS    no effect uses more calls than documented" in out
    assert "PASS    a retried effect costs at most 1 extra look-up" in out
    assert "OVER" not in out
    rows = [line.strip() for line in out.splitlines()]
    for effect in (
        "comment (",
        "progress (start)",
        "progress (settle)",
        "check run (start)",
        "check run (settle)",
        "label [",
        "label (present)",
        "unlabel [",
        "unlabel (absent)",
        "close_issue [",
        "request_review [",
        "dispatch",
        "merge [",
        "merge (merged already)",
        "publish (issue run) [",
        "publish (review) [",
        "facts: an actor's permission",
        "facts: a pull request",
        "facts: checks on a sha",
    ):
        assert any(row.startswith(effect) for row in rows), effect


def test_agent_benchmark_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Quick mode: a 6-turn session timed once, then 6 and 12 turns as fresh processes.
    assert agent.main(["--smoke", "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "verified: holon agent succeeded with 3 commands; the baseline ran 3" in out
    peaks = re.findall(r"turns, +\d+ commands: peak RSS +([\d.]+) MiB", out)
    assert len(peaks) == 2
    # A Python process with pydantic loaded: tens of MiB, not zero, not gigabytes.
    assert all(10 < float(peak) < 500 for peak in peaks)
    written = re.findall(r"evidence/transcript.ndjson (\d+) KiB", out)
    assert len(written) == 2
    assert int(written[1]) > int(written[0]) > 0


def test_agent_benchmark_session_has_the_issue_shape(tmp_path: Path) -> None:
    for turns, commands in ((30, 20), (300, 200)):
        session = agent.make_session(tmp_path / f"{turns}.ndjson", turns, commands)
        lines = session.path.read_text().splitlines()
        recorded = [ModelTurn.model_validate_json(line) for line in lines]
        assert len(recorded) == turns
        tools = [turn.tool_calls[0].name if turn.tool_calls else None for turn in recorded]
        assert tools.count("shell") == commands
        assert tools[-1] == "finish"
        assert tools.count("finish") == 1
        assert {"view", "edit", None} <= set(tools)
        # No interpreter starts in the commands (the baseline would be all start-up).
        arguments = [call.arguments for turn in recorded for call in turn.tool_calls]
        assert not any("python" in str(args) for args in arguments)
