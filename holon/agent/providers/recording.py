"""Recording a live session for the `replay` engine: every turn a provider gives, one line.

`RecordingProvider(inner, path)` answers with `inner` and appends each ModelTurn it got to
`path` as one JSON line, the format `ReplayProvider` reads, flushed as it comes, so even a run
that was killed leaves the turns it had. Failed requests write nothing: a replay then ends
where the live session failed ("recorded session ended after N turns").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from holon.agent.conversation import Message, ModelTurn, ToolSpec
from holon.agent.providers.base import Provider


class RecordingProvider:
    def __init__(self, inner: Provider, path: Path) -> None:
        self.inner = inner
        self.path = Path(path)
        self.name = inner.name
        self.model = inner.model
        self._handle: IO[str] | None = None

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
        handle = self._open()
        handle.write(turn.model_dump_json(exclude_none=True) + "\n")
        handle.flush()
        return turn

    def _open(self) -> IO[str]:
        if self._handle is None:
            # A new file each session, never through a link left at the path.
            fd = os.open(
                self.path,
                os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            self._handle = os.fdopen(fd, "w", encoding="utf-8")
        return self._handle

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
