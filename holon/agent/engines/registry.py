"""Engines by name, each imported only when chosen (an engine's dependencies are its own).

`builtin`: the tool-use loop over the provider HOLON_PROVIDER names (else the one whose key is
set); `replay`: the same loop over the session recorded at HOLON_REPLAY_SESSION; `claude-code`
and `codex`: those CLIs driven headlessly. A name chosen by `--engine`, else HOLON_ENGINE, else
`builtin`; a model by `--model`, else HOLON_MODEL, else the provider's default.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from holon.agent.engine import Engine
from holon.agent.providers.base import MissingCredentials, ProviderError

ENV_ENGINE = "HOLON_ENGINE"
ENV_MODEL = "HOLON_MODEL"
ENV_REPLAY_SESSION = "HOLON_REPLAY_SESSION"
DEFAULT_ENGINE = "builtin"

Factory = Callable[[Mapping[str, str], str | None], Engine]


class EngineUnavailable(Exception):
    """No engine by that name here (unknown, or its module is not installed); one line."""


def _attr(module: str, name: str) -> Any:
    found = getattr(importlib.import_module(module), name, None)
    if found is None:
        raise ImportError(f"{module}.{name}", name=f"{module}.{name}")
    return found


def _builtin(env: Mapping[str, str], model: str | None) -> Engine:
    # The provider by HOLON_PROVIDER, else by which key is set (providers/registry.py).
    provider = _attr("holon.agent.providers.registry", "make_provider")(None, env, model)
    engine: Engine = _attr("holon.agent.engines.builtin", "BuiltinEngine")(provider)
    return engine


def _replay(env: Mapping[str, str], model: str | None) -> Engine:
    # Checked here too, so the reason is the same whether or not the engine is installed.
    if not env.get(ENV_REPLAY_SESSION, "").strip():
        raise MissingCredentials(
            f"{ENV_REPLAY_SESSION} is not set: the replay engine needs a recorded session"
        )
    engine: Engine = _attr("holon.agent.engines.replay", "ReplayEngine").from_env(env, model)
    return engine


def _claude_code(env: Mapping[str, str], model: str | None) -> Engine:
    engine: Engine = _attr("holon.agent.engines.claude_code", "ClaudeCodeEngine").from_env(
        env, model
    )
    return engine


def _codex(env: Mapping[str, str], model: str | None) -> Engine:
    engine: Engine = _attr("holon.agent.engines.codex", "CodexEngine").from_env(env, model)
    return engine


FACTORIES: dict[str, Factory] = {
    "builtin": _builtin,
    "replay": _replay,
    "claude-code": _claude_code,
    "codex": _codex,
}


def engine_name(flag: str | None, env: Mapping[str, str]) -> str:
    return flag or env.get(ENV_ENGINE) or DEFAULT_ENGINE


def model_name(flag: str | None, env: Mapping[str, str]) -> str | None:
    return flag or env.get(ENV_MODEL) or None


def create_engine(name: str, env: Mapping[str, str], model: str | None) -> Engine:
    """The engine `name`, built from `env`. Raises EngineUnavailable, or MissingCredentials when
    the engine cannot even be built without a credential (the agent fails fast, naming it)."""
    factory = FACTORIES.get(name)
    if factory is None:
        known = ", ".join(sorted(FACTORIES))
        raise EngineUnavailable(f"unknown engine {name!r} (known: {known})")
    try:
        return factory(env, model)
    except MissingCredentials:
        raise
    except ProviderError as exc:  # a provider's configuration, e.g. an unknown HOLON_PROVIDER
        raise EngineUnavailable(f"engine {name}: {exc}") from None
    except ImportError as exc:
        what = exc.name or str(exc)
        raise EngineUnavailable(
            f"engine {name} is not available in this installation ({what} is missing)"
        ) from None
