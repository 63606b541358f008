"""Choosing the decider (settings.decider) and a real provider failing over a real loopback
socket: a 5xx or a timeout hands the decision to the policy at once, journaled, with no key in
any line."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from holon.agent.providers.anthropic import AnthropicProvider
from holon.agent.providers.replay import ReplayProvider
from holon.controller import deciders
from holon.controller.agent_decider import AgentDecider
from holon.controller.decide import PolicyDecider
from holon.controller.deciders import make_decider
from holon.controller.facts import StaticFacts
from holon.controller.policy import Policy, load_policy, parse_policy
from tests.controller.conftest import comment_event, decisions, make_controller
from tests.controller_agent.conftest import decide

KEY = "sk-ant-api03-DECIDERkeyMUSTneverSHOW0123456789abcdef"
AGENT = "version: 1\nsettings: {decider: agent}\nrules: []\n"


def agent_policy() -> Policy:
    base = load_policy(None)
    return base.model_copy(
        update={"settings": base.settings.model_copy(update={"decider": "agent"})}
    )


def test_the_policy_decides_by_default() -> None:
    decider = make_decider(load_policy(None), StaticFacts(), {"ANTHROPIC_API_KEY": KEY}, None)
    assert isinstance(decider, PolicyDecider)


def test_agent_without_a_model_key_is_the_policy_with_the_reason_reported() -> None:
    heard: list[str] = []
    decider = make_decider(agent_policy(), StaticFacts(), {}, None, report=heard.append)
    assert isinstance(decider, PolicyDecider)
    assert heard == [
        "decider: agent unavailable (no model credentials: set ANTHROPIC_API_KEY or "
        "OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)); the policy decides"
    ]


def test_agent_with_a_key_asks_that_provider_with_the_configured_model() -> None:
    policy = parse_policy(
        "version: 1\nsettings: {decider: agent, decider_model: claude-haiku-4-5, "
        "decider_provider: anthropic}\nrules: []\n"
    )
    decider = make_decider(policy, StaticFacts(), {"ANTHROPIC_API_KEY": KEY}, "Be brief.")
    assert isinstance(decider, AgentDecider)
    assert isinstance(decider.provider, AnthropicProvider)
    assert decider.provider.model == "claude-haiku-4-5"
    assert "Be brief." in decider.system
    assert KEY not in repr(decider.provider)


def test_an_openai_choice_without_its_key_is_reported() -> None:
    policy = parse_policy(
        "version: 1\nsettings: {decider: agent, decider_provider: openai}\nrules: []\n"
    )
    heard: list[str] = []
    decider = make_decider(
        policy, StaticFacts(), {"ANTHROPIC_API_KEY": KEY}, None, report=heard.append
    )
    assert isinstance(decider, PolicyDecider)
    assert heard
    assert "OPENAI_API_KEY is not set" in heard[0]


def test_a_recorded_session_is_the_model_for_tests_and_demos(tmp_path: Path) -> None:
    session = tmp_path / "decisions.ndjson"
    session.write_text(
        decide("Label.", {"type": "label", "args": {"label": "x"}}).model_dump_json() + "\n"
    )
    decider = make_decider(
        agent_policy(), StaticFacts(), {"HOLON_DECIDER_REPLAY": str(session)}, None
    )
    assert isinstance(decider, AgentDecider)
    assert isinstance(decider.provider, ReplayProvider)
    heard: list[str] = []
    missing = {"HOLON_DECIDER_REPLAY": str(tmp_path / "none.ndjson")}
    assert isinstance(
        make_decider(agent_policy(), StaticFacts(), missing, None, report=heard.append),
        PolicyDecider,
    )
    assert "does not exist" in heard[0]


def test_unknown_settings_are_refused_with_their_line() -> None:
    from holon.errors import InvalidInput

    with pytest.raises(InvalidInput, match=r"line 2: settings\.decider"):
        parse_policy("version: 1\nsettings: {decider: oracle}\nrules: []\n")


@dataclass
class ModelServer:
    """A loopback stand-in for the model's API: answers each POST with `status` after `delay`."""

    status: int = 503
    delay: float = 0.0
    hits: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    state = ModelServer()
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            state.hits.append(dict(self.headers.items()))
            if state.delay:
                stop.wait(state.delay)
            body = json.dumps({"type": "error", "error": {"message": "overloaded"}}).encode()
            try:
                self.send_response(state.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client gave up (a timeout)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(5)


def _agent_controller(tmp_path: Path, server: ModelServer) -> Any:
    ctl = make_controller(
        tmp_path,
        AGENT.replace(
            "rules: []",
            "rules:\n  - {name: solve, command: solve, do: run_skill, skill: github-issue-solve}",
        ),
    )
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
    ctl.parts.decider = make_decider(ctl.parts.policy, ctl.parts.facts, env, None)
    assert isinstance(ctl.parts.decider, AgentDecider)
    return ctl


def test_a_5xx_falls_back_to_the_policy_journaled(
    tmp_path: Path, model_server: ModelServer
) -> None:
    ctl = _agent_controller(tmp_path, model_server)
    ctl.handle(comment_event("/holon solve"))
    (decision,) = decisions(ctl)
    assert len(model_server.hits) == deciders.ATTEMPTS  # retried as the provider does, no more
    assert model_server.hits[0]["x-api-key"] == KEY  # the key went to the model only
    assert decision["decider"] == "policy"
    assert decision["fallback"].startswith("the model could not be asked: ")
    assert "503" in decision["fallback"]
    assert decision["intents"][0]["args"]["skill"] == "github-issue-solve"
    for name in ("d.ndjson", "a.ndjson", "e.ndjson"):
        assert KEY not in (tmp_path / name).read_text()


def test_a_timeout_falls_back_to_the_policy_journaled(
    tmp_path: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deciders, "READ_TIMEOUT", 0.3)
    monkeypatch.setattr(deciders, "ATTEMPTS", 1)
    model_server.delay = 5.0
    model_server.status = 200
    ctl = _agent_controller(tmp_path, model_server)
    start = time.monotonic()
    ctl.handle(comment_event("/holon solve"))
    assert time.monotonic() - start < 3.0
    (decision,) = decisions(ctl)
    assert decision["decider"] == "policy"
    assert decision["fallback"].startswith("the model could not be asked: ")
    assert decision["latency_ms"] >= 250
    assert decision["intents"][0]["args"]["skill"] == "github-issue-solve"
