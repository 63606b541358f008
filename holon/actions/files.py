"""The step's file commands: `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY`.

The runner names both files in the environment; Holon appends to them. The step summary is
bounded: GitHub refuses a step summary over 1 MiB (and then shows none), so what Holon adds is cut
to what still fits, with a line saying so, instead of losing the whole summary.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from holon.actions.commands import key_value
from holon.errors import InvalidInput
from holon.github.neutralize import DEFAULT_DOMAINS, neutralized, rules_for

SUMMARY_LIMIT = 1024 * 1024
CUT_NOTE = "\n\n*(the rest of this summary was cut: GitHub shows at most 1 MiB)*\n"


def _append(path: str, text: str) -> None:
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def write_outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """Every output as its own delimited record in `GITHUB_OUTPUT`, written in one append."""
    path = env.get("GITHUB_OUTPUT")
    if not path:
        raise InvalidInput("GITHUB_OUTPUT is not set: not running as an Actions step")
    _append(path, "".join(key_value(name, value) for name, value in outputs.items()))


def append_summary(env: Mapping[str, str], markdown: str) -> bool:
    """Add `markdown` to the step summary within what is left of 1 MiB; False when it was cut
    (or there was no room at all). Without `GITHUB_STEP_SUMMARY`, nothing is written. It echoes
    issue titles and evidence: neutralized as every body Holon posts (no mention, no command
    line, no link or image off GitHub's own hosts: an image there is fetched by every viewer)."""
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return True
    rules = rules_for(DEFAULT_DOMAINS, env.get("GITHUB_API_URL"), env.get("GITHUB_SERVER_URL"))
    markdown = neutralized(markdown, rules)
    try:
        used = os.stat(path).st_size
    except FileNotFoundError:
        used = 0
    room = SUMMARY_LIMIT - used
    data = markdown.encode("utf-8")
    if len(data) <= room:
        _append(path, markdown)
        return True
    keep = room - len(CUT_NOTE.encode("utf-8"))
    if keep > 0:
        # Cut on a character boundary: a summary that is not UTF-8 is not shown.
        _append(path, data[:keep].decode("utf-8", errors="ignore") + CUT_NOTE)
    return False


__all__ = ["CUT_NOTE", "SUMMARY_LIMIT", "append_summary", "write_outputs"]
