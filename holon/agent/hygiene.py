"""Keeping the agent's secrets from the commands the model runs.

The engine needs its credential; the model's commands never do. They run with `command_env`, the
process environment without anything secret, and the agent process is made non-dumpable so a
command cannot read the key back from `/proc/<agent pid>/environ` (or attach to it).
"""

from __future__ import annotations

import ctypes
import re
import sys
from collections.abc import Iterable, Mapping

from holon.secrets import Redactor, secret_kind

# Credentials the engines read (providers and CLIs); the name patterns below cover them too, but
# naming them keeps them out even under a surprising spelling.
ENGINE_CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
)
_SECRET_NAME = re.compile(
    r"(?i)(_API_KEY$|^API_KEY$|_TOKEN$|^TOKEN$|SECRET|PASSWORD|PASSWD|_CREDENTIALS?$|_PRIVATE_KEY$)"
)
PR_SET_DUMPABLE = 4


def is_secret(name: str, value: str, also: Iterable[str] = ()) -> bool:
    return (
        name in ENGINE_CREDENTIALS
        or name in also
        or _SECRET_NAME.search(name) is not None
        or secret_kind(value) is not None
    )


def split_environment(
    environ: Mapping[str, str], also: Iterable[str] = ()
) -> tuple[dict[str, str], Redactor]:
    """The environment commands run with, and a redactor of every value left out of it."""
    extra = frozenset(also)
    kept: dict[str, str] = {}
    redactor = Redactor()
    for name, value in environ.items():
        if is_secret(name, value, extra):
            redactor.add(value)
        else:
            kept[name] = value
    return kept, redactor


def make_non_dumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0) on Linux: this process's /proc files become root's and it
    cannot be ptraced by its own user. Best effort; True when it took."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
