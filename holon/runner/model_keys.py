"""A run's model keys kept from its agent: which forwarded secrets the key proxy holds instead of
the agent, the proxy that holds them, and the runner process's own custody of them.

Shared by the backends (docker and local): a run given ANTHROPIC_API_KEY or OPENAI_API_KEY gets a
key proxy (`model_proxy.py`) for its lifetime, and its agent gets no key and no base URL, only
where the proxy's socket is and which provider it serves (`model_routes.agent_env`). Holon's
engines that drive a vendor CLI are the exception, and a run may opt out (`--no-model-proxy`):
then the key is passed as before, with a note in the run record saying so.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, MutableMapping

from holon.agent.hygiene import make_non_dumpable
from holon.contract.layout import ENV_MODEL_PROVIDER, ENV_MODEL_PROXY, ENV_MODEL_PROXY_OPENAI_ITSELF
from holon.errors import Unavailable
from holon.runner.backend import BackendOptions
from holon.runner.model_proxy import ModelProxy
from holon.runner.model_routes import BASE_URLS, MODEL_KEYS, agent_env, routes_for

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
    proxy = ModelProxy(routes, token_cap=options.model_tokens)
    try:
        proxy.start()
    except OSError as exc:
        raise Unavailable(
            f"cannot start the model key proxy: {exc.strerror or type(exc).__name__}"
        ) from None
    env.update(agent_env(routes, socket_path or str(proxy.socket_path)))
    return proxy, []


def hold_model_keys(names: Iterable[str], environ: MutableMapping[str, str] = os.environ) -> None:
    """For the process that read the model keys it forwards (`names`) from its environment:
    no process it starts inherits one, and no process of its user (its agent) can read one
    out of it. Every model key is dropped from its environment, after its value is wiped where
    the process was started with it (the block /proc/<pid>/environ shows, which dropping a
    variable leaves as it was), and the process is made non-dumpable, which keeps its memory
    (/proc/<pid>/mem, ptrace) from its own user's processes."""
    held = {name for name in MODEL_KEYS if name in environ} | set(names) & set(MODEL_KEYS)
    if not held:
        return
    if environ is os.environ:
        _wipe_environment_values(held)
    for name in held:
        environ.pop(name, None)
    make_non_dumpable()


def _wipe_environment_values(names: Iterable[str]) -> None:
    """Overwrite with NULs the values of `names` in the C environment (`environ`), in place."""
    if not sys.platform.startswith("linux"):
        return
    prefixes = [os.fsencode(name) + b"=" for name in names]
    try:
        entries = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError, AttributeError):
        return
    index = 0
    while address := entries[index]:
        entry = ctypes.string_at(address)
        for prefix in prefixes:
            if entry.startswith(prefix):
                ctypes.memset(address + len(prefix), 0, len(entry) - len(prefix))
        index += 1
