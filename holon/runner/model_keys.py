"""A run's model keys kept from its agent: which forwarded secrets the key proxy holds instead of
the agent, the proxy that holds them, and the runner process's own custody of them.

Shared by the backends (docker and local): a run given ANTHROPIC_API_KEY or OPENAI_API_KEY gets a
key proxy (`model_proxy.py`) for its lifetime, and its agent gets no key and no base URL, only
where the proxy's socket is and which provider it serves (`model_routes.agent_env`). Holon's
engines that drive a vendor CLI are the exception, and a run may opt out (`--no-model-proxy`):
then the key is passed as before, with a note in the run record saying so.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import TYPE_CHECKING

from holon.contract.layout import ENV_MODEL_PROVIDER, ENV_MODEL_PROXY, ENV_MODEL_PROXY_OPENAI_ITSELF
from holon.errors import Unavailable
from holon.runner.backend import BackendOptions
from holon.runner.model_routes import BASE_URLS, MODEL_KEYS, agent_env, routes_for

if TYPE_CHECKING:
    from holon.runner.model_proxy import ModelProxy

ENV_ENGINE = "HOLON_ENGINE"
# Holon's agent engines that drive a vendor CLI: they reach their model with the key themselves
# (their own HTTP clients, endpoints beyond the two the proxy forwards), so they get it as before.
UNPROXIED_ENGINES = ("claude-code", "codex")


def proxy_model_keys(
    env: dict[str, str],
    options: BackendOptions,
    *,
    socket_path: str | None,
    passed: str,
) -> tuple[ModelProxy | None, list[str]]:
    """Take the model keys (and their base URLs) out of the agent's environment `env` and start
    the proxy that holds them instead, telling the agent where it is: at `socket_path` (where the
    agent sees the socket), or None for the socket's own path. No proxy when the run was given
    no model key, or when its agent cannot use one: then the key stays in `env` and a note says
    it was `passed` (e.g. "into the container")."""
    for variable in (ENV_MODEL_PROXY, ENV_MODEL_PROVIDER, ENV_MODEL_PROXY_OPENAI_ITSELF):
        env.pop(variable, None)  # only the runner says where the proxy is
    given = sorted(name for name in MODEL_KEYS if env.get(name, "").strip())
    if not given:
        return None, []
    engine = env.get(ENV_ENGINE, "").strip().lower()
    if engine in UNPROXIED_ENGINES or not options.model_proxy:
        why = (
            f"the {engine} engine cannot use it yet"
            if engine in UNPROXIED_ENGINES
            else "the run asked for no model proxy"
        )
        return None, [f"{', '.join(given)} passed {passed}: {why}"]
    keys = {name: env.pop(name) for name in MODEL_KEYS if name in env}
    # The proxy's settings now, not the agent's (a base URL may carry credentials of its own).
    run_env = {v: env.pop(v) for k, v in BASE_URLS.items() if k in keys and v in env}
    routes = routes_for(keys, run_env, os.environ)
    from holon.runner.model_proxy import ModelProxy  # an HTTP client and server: only when used

    proxy = ModelProxy(routes, token_cap=options.model_tokens)
    try:
        proxy.start()
    except OSError as exc:
        raise Unavailable(
            f"cannot start the model key proxy: {exc.strerror or type(exc).__name__}"
        ) from None
    env.update(agent_env(routes, socket_path or str(proxy.socket_path)))
    return proxy, []


def hold_model_keys(environ: MutableMapping[str, str] = os.environ) -> None:
    """For the process that read the model keys it forwards from its environment: every model
    key is its own from now on (`key_custody.hold_secrets`)."""
    if not any(name in environ for name in MODEL_KEYS):
        return  # nothing held: ctypes, which holding needs, stays unloaded before the agent runs
    from holon.key_custody import hold_secrets

    hold_secrets(MODEL_KEYS, environ)
