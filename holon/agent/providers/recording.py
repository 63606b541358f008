"""Recording a live session for the `replay` engine: every turn a provider gives, one line.

`RecordingProvider(inner, path)` answers with `inner` and appends each ModelTurn it got to
`path` as one JSON line, the format `ReplayProvider` reads, written as it comes, so even a run
that was killed leaves the turns it had. Failed requests write nothing: a replay then ends
where the live session failed ("recorded session ended after N turns").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from holon.agent.conversation import Message, ModelTurn, ToolSpec
from holon.agent.providers.base import Provider


class RecordingProvider:
    def __init__(self, inner: Provider, path: Path) -> None:
        self.inner = inner
        self.path = Path(path)
        self.name = inner.name
        self.model = inner.model
        self._started = False

    def missing(self) -> str | None:
        check = getattr(self.inner, "missing", None)
        return check() if callable(check) else None

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        turn = self.inner.complete(system, messages, tools, max_tokens=max_tokens)
        self._append(turn.model_dump_json(exclude_none=True) + "\n")
        return turn

    def _append(self, line: str) -> None:
        # A new file for each session (the first turn truncates), then appended to; opened per
        # turn so no handle outlives a request. Never written through a link left at the path.
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        flags |= os.O_APPEND if self._started else os.O_TRUNC
        fd = os.open(self.path, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(line)
        self._started = True
