"""A recorded provider session played back: the `replay` engine's model, deterministic, offline.

The session is NDJSON, one ModelTurn per line (`{"text", "tool_calls": [{"id", "name",
"arguments"}], "stop_reason", "usage", "model"}`; blank lines are skipped), read lazily: each
request opens the file, reads the next line from where the last one ended, and closes it, so a
session of any length costs one line of memory and no handle is left open whoever forgets to
close the provider. Whatever the loop sends is ignored: the recorded turns come back in order.
A malformed line, or a request past the last line, is a ProviderError naming where.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from holon.agent.conversation import Message, ModelTurn, ToolSpec
from holon.agent.providers.base import ProviderError
from holon.validation import describe_validation_error

MAX_LINE = 16 * 1024 * 1024  # bytes of one recorded turn


class ReplayProvider:
    name = "replay"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.model = "recorded"
        self._offset = 0  # bytes read so far
        self._line = 0  # lines read so far
        self._turns = 0  # turns returned so far
        self._failed: str | None = None  # a session that went wrong is not read on

    def missing(self) -> str | None:
        if not self.path.exists():
            return f"the recorded session {self.path} does not exist"
        if not self.path.is_file():
            return f"the recorded session {self.path} is not a regular file"
        return None

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        max_tokens: int,
    ) -> ModelTurn:
        if self._failed is not None:
            raise ProviderError(self._failed)
        try:
            return self._next()
        except ProviderError as exc:
            self._failed = str(exc)
            raise

    def _next(self) -> ModelTurn:
        with self._open() as handle:
            handle.seek(self._offset)
            while raw := handle.readline(MAX_LINE + 1):
                self._offset += len(raw)
                self._line += 1
                if len(raw) > MAX_LINE:
                    raise ProviderError(f"{self._where()} is longer than {MAX_LINE} bytes")
                if not raw.strip():
                    continue
                try:
                    turn = ModelTurn.model_validate_json(raw)
                except ValidationError as exc:
                    raise ProviderError(describe_validation_error(self._where(), exc)) from None
                self._turns += 1
                if turn.model:
                    self.model = turn.model
                return turn
        raise ProviderError(f"recorded session ended after {self._turns} turns")

    def _where(self) -> str:
        return f"recorded session {self.path.name} line {self._line}"

    def _open(self) -> BinaryIO:
        try:
            # No waiting on a FIFO, and only a regular file is read.
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise ProviderError(
                f"cannot read the recorded session {self.path}: {exc.strerror}"
            ) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ProviderError(f"the recorded session {self.path} is not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
