"""`holon action` decides with the decider its policy names, as `holon serve` does (one
construction: serve/build.py): a recorded model's label on an owner's plain comment."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from holon.actions.config import ActionConfig
from holon.actions.single import run_step
from tests.actions.step_support import Step, payload
from tests.controller_agent.conftest import decide

NOW = datetime(2026, 3, 1, tzinfo=UTC)
POLICY = "version: 1\nsettings: {decider: agent}\nrules: []\n"


def test_the_action_step_decides_with_a_recorded_model(tmp_path: Path) -> None:
    data = payload("issue_comment", "created")
    data["comment"].update(
        body="This is clearly a bug, please label it.", author_association="OWNER"
    )
    step = Step(tmp_path / "step", "issue_comment", data)
    (step.tmp / "policy.yaml").write_text(POLICY)
    session = tmp_path / "model.ndjson"
    label = {"type": "label", "args": {"label": "bug"}}
    session.write_text(decide("The owner reports a bug.", label).model_dump_json() + "\n")
    env = step.environ(
        HOLON_POLICY="policy.yaml", HOLON_DECIDER_REPLAY=str(session), HOLON_DRY_RUN="true"
    )
    said: list[str] = []
    run_step(env, ActionConfig.from_env(env), clock=lambda: NOW, say=said.append)
    lines = (step.state_dir / "decisions.ndjson").read_text().splitlines()
    (decision,) = (d for d in map(json.loads, lines) if d["outcome"] == "decided")
    assert decision["decider"] == "agent"
    assert decision["model"] == "claude-test"
    assert [i["args"] for i in decision["intents"]] == [{"label": "bug"}]
    # The step's workspace is no git checkout: no guidance, said once.
    assert sum("decider: no .holon/controller.md" in line for line in said) == 1
