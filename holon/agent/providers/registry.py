"""A model provider by name, or by which credentials the environment holds.

`make_provider(None, env)` takes HOLON_PROVIDER, else (in a run behind the host's key proxy,
HOLON_MODEL_PROXY set) HOLON_MODEL_PROVIDER, else `anthropic` when ANTHROPIC_API_KEY is set,
else `openai` when OPENAI_API_KEY or OPENAI_BASE_URL is set. `missing` answers the same
question without building anything that talks to the network, for `holon agent --probe`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from holon.agent.providers import anthropic, openai, proxied
from holon.agent.providers.base import MissingCredentials, Provider, ProviderError
from holon.secrets import mask_secret_looking

PROVIDER_VARIABLE = "HOLON_PROVIDER"
NO_CREDENTIALS = (
    "no model credentials: set ANTHROPIC_API_KEY or OPENAI_API_KEY "
    "(or OPENAI_BASE_URL for a local server)"
)

_FACTORIES: dict[str, Callable[[Mapping[str, str], str | None], Provider]] = {
    "anthropic": anthropic.AnthropicProvider.from_env,
    "openai": openai.OpenAIProvider.from_env,
}
KNOWN = tuple(sorted(_FACTORIES))


def _set(env: Mapping[str, str], variable: str) -> bool:
    return bool(env.get(variable, "").strip())


def provider_name(name: str | None, env: Mapping[str, str]) -> str:
    """The provider to use: `name`, else HOLON_PROVIDER, else the one whose credentials are set
    (Anthropic first). ProviderError for an unknown name, MissingCredentials for none."""
    chosen = (name or env.get(PROVIDER_VARIABLE, "")).strip().lower()
    if not chosen and proxied.socket_path(env) is not None:
        # A proxied run has no key to choose by: the runner names what its proxy serves.
        chosen = proxied.provider(env) or "anthropic"
    if not chosen:
        if _set(env, anthropic.KEY_VARIABLE):
            return "anthropic"
        if _set(env, openai.KEY_VARIABLE) or _set(env, openai.BASE_URL_VARIABLE):
            return "openai"
        raise MissingCredentials(NO_CREDENTIALS)
    if chosen not in _FACTORIES:
        shown = mask_secret_looking(chosen if len(chosen) <= 40 else chosen[:40] + "…")
        raise ProviderError(f"unknown model provider {shown!r} (known: {', '.join(KNOWN)})")
    return chosen


def make_provider(name: str | None, env: Mapping[str, str], model: str | None = None) -> Provider:
    """The provider, ready to answer; it reads its key, base URL and model from `env` only."""
    return _FACTORIES[provider_name(name, env)](env, model)


def missing(name: str | None, env: Mapping[str, str]) -> str | None:
    """What keeps a provider from being made (one line naming the variable), or None when it
    could be; no request is sent."""
    try:
        make_provider(name, env)
    except ProviderError as err:
        return str(err)
    return None
