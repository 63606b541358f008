"""Which decider decides: `settings.decider` of the policy (docs/controller-agent.md).

`policy` (the default) is the rules. `agent` is a model within the same vocabulary and
guardrails, the rules deciding whenever the model cannot: it needs a model, which is the
recorded session HOLON_DECIDER_REPLAY names (tests and demos), else the provider whose key the
environment holds (`settings.decider_provider` to choose). Without one, the policy decides and
the reason is reported once. Keys are read from the mapping given, never from files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from holon.agent.hygiene import split_environment
from holon.agent.providers.base import Provider, ProviderError
from holon.controller.decide import Decider, PolicyDecider
from holon.controller.facts import RepoFacts
from holon.controller.policy import Policy

REPLAY_VARIABLE = "HOLON_DECIDER_REPLAY"
# A decision is short and the rules stand in when the model is slow: fail over quickly.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 60.0
ATTEMPTS = 2
MAX_TOTAL_WAIT = 10.0


@dataclass(frozen=True)
class Choice:
    provider: Provider | None
    reason: str | None  # why there is none (the policy decides), else None


def choose_provider(policy: Policy, env: Mapping[str, str]) -> Choice:
    """The model the agent decider asks, or why there is none."""
    settings = policy.settings
    replay = env.get(REPLAY_VARIABLE, "").strip()
    if replay:
        from holon.agent.providers.replay import ReplayProvider

        recorded = ReplayProvider(Path(replay))
        missing = recorded.missing()
        if missing is not None:
            return Choice(None, f"{REPLAY_VARIABLE}: {missing}")
        return Choice(recorded, None)
    from holon.agent.providers import anthropic, openai, registry
    from holon.agent.providers.http import JsonHttp, RetryPolicy

    try:
        name = registry.provider_name(settings.decider_provider, env)
        http = JsonHttp(
            name,
            policy=RetryPolicy(
                attempts=ATTEMPTS,
                max_total_wait=MAX_TOTAL_WAIT,
                connect_timeout=CONNECT_TIMEOUT,
                read_timeout=READ_TIMEOUT,
            ),
        )
        factory = (
            anthropic.AnthropicProvider.from_env
            if name == "anthropic"
            else openai.OpenAIProvider.from_env
        )
        return Choice(factory(env, settings.decider_model, http=http), None)
    except ProviderError as exc:
        return Choice(None, str(exc))


def make_decider(
    policy: Policy,
    facts: RepoFacts,
    env: Mapping[str, str],
    guidance: str | None,
    *,
    report: Callable[[str], None] | None = None,
) -> Decider:
    """The decider `policy.settings.decider` names; `report` hears once why the policy decides
    when the agent was asked for and cannot."""
    rules = PolicyDecider(policy, facts)
    if policy.settings.decider != "agent":
        return rules
    choice = choose_provider(policy, env)
    if choice.provider is None:
        if report is not None:
            report(f"decider: agent unavailable ({choice.reason}); the policy decides")
        return rules
    from holon.controller.agent_decider import AgentDecider

    decider = AgentDecider(choice.provider, policy, facts, fallback=rules, guidance=guidance)
    # Whatever the model writes is masked for every secret value the environment holds.
    decider.redactor = split_environment(env)[1]
    return decider


__all__ = ["REPLAY_VARIABLE", "Choice", "choose_provider", "make_decider"]
