"""`holon serve` (and so `holon action`, built by the same `build_serve`) decides with the
decider the policy names: a recorded model with HOLON_DECIDER_REPLAY, the policy without a key
(said once), the guidance read from the served repository's default branch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.controller.agent_decider import AgentDecider
from holon.serve.build import build_serve
from holon.serve.serve import ServeOptions
from tests.controller_agent.conftest import decide
from tests.controller_agent.test_guidance import upstream
from tests.gateway.conftest import example

POLICY = (
    "version: 1\nsettings: {decider: agent}\nrules:\n"
    "  - {name: solve, command: solve, do: run_skill, skill: github-issue-solve}\n"
)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _replay(tmp_path: Path) -> Path:
    payload = example("issue_comment", "created")
    payload["comment"].update(body="Please label this as a bug.", author_association="OWNER")
    path = tmp_path / "events.ndjson"
    path.write_text(json.dumps({"delivery": "d-1", "event": "issue_comment", "payload": payload}))
    return path


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "HOLON_PROVIDER"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_keys")
def test_serve_decides_with_a_recorded_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "model.ndjson"
    label = {"type": "label", "args": {"label": "bug"}}
    session.write_text(decide("The owner asks for a label.", label).model_dump_json() + "\n")
    monkeypatch.setenv("HOLON_DECIDER_REPLAY", str(session))
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    state = tmp_path / "state"
    clone = upstream(tmp_path, b"Label bugs.\n")
    argv = ["serve", "--state-dir", str(state), "--replay", str(_replay(tmp_path))]
    main([*argv, "--dry-run", "--once", "--policy", str(policy), "--workspace", str(clone)])
    (decision,) = (d for d in _lines(state / "decisions.ndjson") if d["outcome"] == "decided")
    assert decision["decider"] == "agent"
    assert decision["model"] == "claude-test"
    assert decision["rationale"] == "The owner asks for a label."
    assert [i["args"] for i in decision["intents"]] == [{"label": "bug"}]


@pytest.mark.usefixtures("no_keys")
def test_serve_without_a_model_key_says_so_once_and_the_policy_decides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    state = tmp_path / "state"
    argv = ["serve", "--state-dir", str(state), "--replay", str(_replay(tmp_path))]
    main([*argv, "--dry-run", "--once", "--policy", str(policy), "--workspace", str(tmp_path)])
    err = capsys.readouterr().err
    assert err.count("decider: agent unavailable (no model credentials") == 1
    (decision,) = _lines(state / "decisions.ndjson")
    assert decision["decider"] == "policy"


def test_the_guidance_of_the_default_branch_reaches_the_system_prompt(tmp_path: Path) -> None:
    from holon.controller.facts import StaticFacts
    from holon.controller.policy import parse_policy

    clone = upstream(tmp_path, b"Never close issues labelled keep.\n")
    session = tmp_path / "model.ndjson"
    session.write_text("")
    options = ServeOptions(state_dir=tmp_path / "state", workspace=clone, dry_run=True, once=True)
    serve = build_serve(
        options,
        {"HOLON_DECIDER_REPLAY": str(session)},
        offline_facts=lambda login: StaticFacts(),
        report=lambda line: None,
        policy=parse_policy(POLICY),
        default_branch="main",
    )
    controller = serve.open()
    try:
        decider = controller.parts.decider
        assert isinstance(decider, AgentDecider)
        assert "Never close issues labelled keep." in decider.system
    finally:
        serve.close()
