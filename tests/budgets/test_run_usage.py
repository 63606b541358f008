"""A run's usage: the runner's `model_usage` in run.json first (host-measured), else the agent's
own `evidence/usage.json`, read as untrusted: no link followed, bounded, sane numbers only;
priced with the policy's table into ActionResult.usage."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from holon.contract.manifest import Manifest
from holon.controller.pricing import pricer
from holon.executor.handlers import from_run_record
from holon.executor.result import ActionResult
from holon.executor.usage import MAX_USAGE_BYTES
from holon.intent import Target, make_intent
from holon.price import Price
from holon.spend import Spend

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
PRICES = {"claude-*": Price(input_per_mtok=3, output_per_mtok=15)}
INTENT = make_intent(
    type_="run_skill",
    target=Target(kind="issue", id="7", repo="o/r"),
    args={"skill": "github-issue-solve"},
    reason="test",
    decider="policy",
    event_key="k",
    event_id="e",
    at=NOW,
    skills=frozenset({"github-issue-solve"}),
)


def record(output: Path, model_usage: Any = None, model: str | None = "claude-x") -> Any:
    manifest = Manifest.model_validate(
        {
            "status": "completed",
            "outcome": "success",
            "metadata": {"engine": {"name": "builtin", "model": model}},
        }
    )
    return SimpleNamespace(
        outcome="success",
        status="completed",
        reason="done",
        run_id="r1",
        output_path=str(output),
        manifest_path=None,
        manifest=manifest,
        model_usage=model_usage,
    )


def self_report(output: Path, data: Any) -> Path:
    (output / "evidence").mkdir(parents=True, exist_ok=True)
    path = output / "evidence" / "usage.json"
    path.write_text(json.dumps(data))
    return path


def settled(output: Path, **kwargs: Any) -> ActionResult:
    return from_run_record(INTENT, 1, NOW, record(output, **kwargs), price=pricer(PRICES))


def test_the_runners_measure_comes_first(tmp_path: Path) -> None:
    self_report(tmp_path, {"input_tokens": 1, "output_tokens": 1, "requests": 1})
    measured = {
        "input_tokens": 1_000_000,
        "output_tokens": 100_000,
        "requests": 4,
        "model": "claude-y",
    }
    result = settled(tmp_path, model_usage=measured)
    assert result.usage == Spend(input_tokens=1_000_000, output_tokens=100_000, cost_usd=4.5)
    assert result.usage_source == "host"


def test_without_it_the_agents_self_report_is_read_and_marked(tmp_path: Path) -> None:
    self_report(tmp_path, {"input_tokens": 2000, "output_tokens": 1000, "requests": 2})
    result = settled(tmp_path)
    # The model is the one the agent's manifest names.
    assert result.usage == Spend(input_tokens=2000, output_tokens=1000, cost_usd=0.021)
    assert result.usage_source == "agent"


def test_an_unpriced_model_reports_unpriced_tokens(tmp_path: Path) -> None:
    self_report(tmp_path, {"input_tokens": 2000, "output_tokens": 1000})
    result = settled(tmp_path, model="llama")
    assert result.usage == Spend(input_tokens=2000, output_tokens=1000, unpriced_tokens=3000)


def test_no_usage_anywhere_is_none(tmp_path: Path) -> None:
    result = settled(tmp_path)
    assert result.usage is None
    assert result.usage_source is None


def test_a_symlinked_self_report_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"input_tokens": 5, "output_tokens": 5}))
    output = tmp_path / "out"
    (output / "evidence").mkdir(parents=True)
    (output / "evidence" / "usage.json").symlink_to(elsewhere)
    assert settled(output).usage is None
    linked = tmp_path / "out2"
    linked.mkdir()
    (linked / "evidence").symlink_to(output / "evidence")
    assert settled(linked).usage is None


def test_an_oversized_self_report_is_refused(tmp_path: Path) -> None:
    path = self_report(tmp_path, {"input_tokens": 5, "output_tokens": 5})
    path.write_text(
        json.dumps({"input_tokens": 5, "output_tokens": 5, "pad": "x" * MAX_USAGE_BYTES})
    )
    assert settled(tmp_path).usage is None


@pytest.mark.parametrize(
    "data",
    [
        {"input_tokens": -5, "output_tokens": 5},
        {"input_tokens": 10**13, "output_tokens": 5},
        {"input_tokens": True, "output_tokens": 5},
        {"input_tokens": 1.5, "output_tokens": 5},
        {"input_tokens": "5", "output_tokens": 5},
        [5, 5],
    ],
)
def test_numbers_no_run_could_have_spent_are_refused(tmp_path: Path, data: Any) -> None:
    self_report(tmp_path, data)
    assert settled(tmp_path).usage is None
    # A measure of that shape from the runner is not taken either: the self-report is read.
    (tmp_path / "evidence" / "usage.json").write_text('{"input_tokens": 3, "output_tokens": 4}')
    fallback = settled(tmp_path, model_usage=data)
    assert fallback.usage_source == "agent"
    assert fallback.usage is not None
    assert fallback.usage.tokens == 7


def test_a_garbled_self_report_is_none(tmp_path: Path) -> None:
    path = self_report(tmp_path, {})
    path.write_bytes(b"\xff{not json")
    assert settled(tmp_path).usage is None


def test_the_run_token_limit_reaches_the_key_proxy_as_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's own token budget runs inside the container, where the model's commands run
    too; the proxy's cap is the same limit enforced on the host."""
    import holon.runner
    from holon.executor.handlers import RunSkillHandler

    sent: list[object] = []

    def fake_run(request: object) -> object:
        sent.append(request)
        raise RuntimeError("stop here")

    monkeypatch.setattr(holon.runner, "run", fake_run)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    handler = RunSkillHandler(
        workspace=workspace,
        output_root=tmp_path / "runs",
        clock=lambda: NOW,
        runtime="local",
        agent=["true"],
        image=None,
        describe=lambda skill: f"the goal of {skill}",
        constraints={"max_tokens": 5000},
    )
    with pytest.raises(RuntimeError, match="stop here"):
        handler(INTENT, 1)
    assert [getattr(r, "model_tokens", None) for r in sent] == [5000]
