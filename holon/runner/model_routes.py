"""Which requests the key proxy forwards, where to, and with which key: one route per model key
the run was given.

Pure: the forwarded secrets and the run's environment in, routes out. The paths are the ones
the agent's providers send to the proxy (`holon/agent/providers/proxied.py`): Anthropic's
`/v1/messages` and the OpenAI-compatible `/v1/chat/completions`. The upstream is the run's own
base URL setting (its spec env), else the host's, else the provider's API host.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from holon.contract.layout import ENV_MODEL_PROVIDER, ENV_MODEL_PROXY, ENV_MODEL_PROXY_OPENAI_ITSELF
from holon.errors import InvalidInput
from holon.secrets import mask_secret_looking

ANTHROPIC_KEY = "ANTHROPIC_API_KEY"
OPENAI_KEY = "OPENAI_API_KEY"
MODEL_KEYS = (ANTHROPIC_KEY, OPENAI_KEY)
BASE_URLS = {ANTHROPIC_KEY: "ANTHROPIC_BASE_URL", OPENAI_KEY: "OPENAI_BASE_URL"}
DEFAULT_BASES = {
    ANTHROPIC_KEY: "https://api.anthropic.com",
    OPENAI_KEY: "https://api.openai.com/v1",
}

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Route:
    provider: str  # "anthropic" | "openai"
    upstream: str  # the URL the request is sent to
    auth_header: str
    # The header's value: the key itself. Never printed (repr=False) nor logged.
    auth_value: str = field(repr=False)


def _base(name: str, run_env: Mapping[str, str], host_env: Mapping[str, str]) -> str:
    variable = BASE_URLS[name]
    value = (run_env.get(variable) or host_env.get(variable) or "").strip() or DEFAULT_BASES[name]
    try:
        parts = urlsplit(value)
        scheme, host = parts.scheme, parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        scheme, host = "", None
    if scheme not in ("http", "https") or not host or parts.query or parts.fragment:
        shown = mask_secret_looking(value)[:200]
        raise InvalidInput(f"{variable} is not an http(s) URL with a host: {shown!r}")
    return value.rstrip("/")


def routes_for(
    secrets: Mapping[str, str], run_env: Mapping[str, str], host_env: Mapping[str, str]
) -> dict[str, Route]:
    """The proxy's routes, by path, for the model keys among `secrets` (none: no proxy)."""
    routes: dict[str, Route] = {}
    key = secrets.get(ANTHROPIC_KEY, "").strip()
    if key:
        base = _base(ANTHROPIC_KEY, run_env, host_env)
        routes[ANTHROPIC_PATH] = Route("anthropic", base + "/v1/messages", "x-api-key", key)
    key = secrets.get(OPENAI_KEY, "").strip()
    if key:
        base = _base(OPENAI_KEY, run_env, host_env)
        routes[OPENAI_PATH] = Route(
            "openai", base + "/chat/completions", "authorization", f"Bearer {key}"
        )
    return routes


def is_openai_itself(route: Route) -> bool:
    return (urlsplit(route.upstream).hostname or "").lower() == "api.openai.com"


def agent_env(routes: Mapping[str, Route], socket_path: str) -> dict[str, str]:
    """What the agent is told about the proxy: where it is and which provider it serves first
    (Anthropic, as the providers choose when both keys are set)."""
    providers = [route.provider for route in routes.values()]
    env = {ENV_MODEL_PROXY: socket_path, ENV_MODEL_PROVIDER: providers[0]}
    openai = routes.get(OPENAI_PATH)
    if openai is not None:
        env[ENV_MODEL_PROXY_OPENAI_ITSELF] = "1" if is_openai_itself(openai) else "0"
    return env
