"""`holon agent`'s builtin engine in the agent image, given a model key by the docker backend:
the key stays on the host, the agent's provider talks to the run's key proxy over its socket
with no network, and the loopback fake model gets the key and answers with `finish`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import SecretStr

from holon.contract.spec import Spec
from holon.runner import RunRequest, run
from holon.runner.record import ModelUsage
from tests.support.fake_model import fake_model

pytestmark = [pytest.mark.docker, pytest.mark.slow]

KEY = "sk-ant-imageproxy-3c9e1f7a2b8d4e6f0a1b"
FINISH = {
    "id": "msg_finish",
    "type": "message",
    "role": "assistant",
    "model": "claude-fake-1",
    "content": [
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "finish",
            "input": {"status": "success", "summary": "Nothing needed changing."},
        }
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 100, "output_tokens": 20},
}


def test_the_builtin_engine_reaches_its_model_only_through_the_proxy(
    holon_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    with fake_model(KEY) as fake:
        fake.answers.append(FINISH)
        spec = Spec.model_validate(
            {
                "version": "v1",
                "kind": "Holon",
                "metadata": {"name": "image-proxy"},
                "context": {
                    "env": {
                        "HOLON_ENGINE": "builtin",
                        "HOLON_MODEL": "claude-fake-1",
                        "ANTHROPIC_BASE_URL": fake.anthropic_base,
                    }
                },
                "goal": {"description": "look, change nothing, finish"},
            }
        )
        result = run(
            RunRequest(
                spec=spec,
                workspace=make_repo(dirty=False),
                output=tmp_path / "out",
                runtime="docker",
                image=holon_image,
                secrets={"ANTHROPIC_API_KEY": SecretStr(KEY)},
                work_dir=tmp_path,
            )
        )
    assert fake.requests, result.reason
    first = fake.requests[0]
    assert first.path == "/v1/messages"
    assert first.headers["x-api-key"] == KEY
    assert json.loads(first.body)["model"] == "claude-fake-1"
    assert result.outcome == "success", result.reason
    assert result.model_usage == ModelUsage(
        input_tokens=100, output_tokens=20, requests=1, model="claude-fake-1"
    )
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
