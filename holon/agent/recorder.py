"""The evidence an engine leaves, streamed to the output's `evidence/` as it happens.

`evidence/transcript.ndjson` (one JSON object per entry), `evidence/commands.ndjson` (one
`CommandRecord` per line) and `evidence/usage.json` (the running token total). The two logs are
opened once and each entry is appended and flushed, never kept in memory, so memory stays flat
however long the run. Every string is masked before it is written (the known secret values and
anything that looks like a token) and bounded.

The model's shell can write into the output directory, so the files on disk are not what the
agent trusts: `exit_codes` is an in-memory index of every recorded command's exit code, the one
the outcome check reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from holon.agent.conversation import Usage
from holon.agent.engine import CommandRecord
from holon.agent.files import open_dir, replace_at
from holon.fsutil import remove_at
from holon.jsonio import scrub
from holon.secrets import Redactor, mask_secret_looking

EVIDENCE_DIR = "evidence"
TRANSCRIPT_FILE = "transcript.ndjson"
COMMANDS_FILE = "commands.ndjson"
USAGE_FILE = "usage.json"

MAX_STRING = 16 * 1024  # one string of a transcript entry
MAX_ENTRY = 64 * 1024  # one serialized transcript line
MAX_COMMAND = 4 * 1024  # a command's text
MAX_OUTPUT_TAIL = 8 * 1024  # the tail of a command's output kept as evidence
MAX_DEPTH = 20  # nesting of an entry: deeper parts are replaced by a note
# Commands listed in summary.md: the first ones (the rest are counted, and all are in the log).
SUMMARY_COMMANDS = 200

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LOG_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC


def head(text: str, limit: int) -> tuple[str, bool]:
    """The first `limit` characters of `text` and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut]", True


def tail(text: str, limit: int) -> tuple[str, bool]:
    """The last `limit` characters of `text` and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return f"[... {len(text) - limit} characters cut]\n" + text[-limit:], True


@dataclass(frozen=True)
class CommandLine:
    """A recorded command as summary.md lists it (its text cut to one short line)."""

    id: int
    command: str
    exit_code: int | None
    timed_out: bool


def open_evidence_dir(output_fd: int) -> int:
    """An fd for `<output>/evidence`, made fresh: whatever was at that name (a link, a file, a
    directory the model left) is removed unfollowed first."""
    remove_at(output_fd, EVIDENCE_DIR)
    os.mkdir(EVIDENCE_DIR, 0o755, dir_fd=output_fd)
    return os.open(EVIDENCE_DIR, _DIR_FLAGS, dir_fd=output_fd)


class EvidenceRecorder:
    """The `Recorder` engines report to (holon.agent.engine.Recorder)."""

    def __init__(self, evidence_fd: int, mask: Callable[[str], str]) -> None:
        self._dir = evidence_fd
        self._mask = mask
        self._transcript = self._open(TRANSCRIPT_FILE)
        self._commands = self._open(COMMANDS_FILE)
        self._start = time.monotonic()
        self._index: dict[int, int | None] = {}
        self._listed: list[CommandLine] = []
        self.total = Usage()
        self.requests = 0
        self._closed = False
        self._write_usage()

    @classmethod
    def create(cls, output: Path, redactor: Redactor) -> EvidenceRecorder:
        """A recorder writing into a fresh `<output>/evidence/`, masking `redactor`'s values and
        anything secret-looking."""
        output_fd = open_dir(output)
        try:
            evidence_fd = open_evidence_dir(output_fd)
        finally:
            os.close(output_fd)
        return cls(evidence_fd, lambda text: mask_secret_looking(redactor(text)))

    def _open(self, name: str) -> IO[str]:
        fd = os.open(name, _LOG_FLAGS, 0o644, dir_fd=self._dir)
        return os.fdopen(fd, "w", encoding="utf-8")

    # -- what engines call --------------------------------------------------------------------

    def transcript(self, entry: Mapping[str, Any]) -> None:
        data = {"t": round(time.monotonic() - self._start, 3), **self._clean(entry, 0)}
        line = json.dumps(data, ensure_ascii=False)
        if len(line) > MAX_ENTRY:
            # Too many strings together: the entry's kind and a cut copy as text stay readable.
            cut, _ = head(line, MAX_ENTRY - 1024)
            line = json.dumps(
                {"t": data["t"], "kind": str(data.get("kind", "")), "truncated": True, "text": cut},
                ensure_ascii=False,
            )
        self._append(self._transcript, line)

    def command(
        self,
        command: str,
        exit_code: int | None,
        *,
        duration: float,
        output: str,
        timed_out: bool = False,
    ) -> CommandRecord:
        shown, _ = self._head(command, MAX_COMMAND)
        # Masked in a wider window before the final cut: a cut could leave half a secret no
        # pattern recognizes, and it falls outside what is kept.
        window = output[-(4 * MAX_OUTPUT_TAIL) :]
        kept, cut = tail(self._mask(scrub(window)), MAX_OUTPUT_TAIL)
        truncated = cut or len(output) > len(window)
        record = CommandRecord(
            id=len(self._index) + 1,
            command=shown,
            exit_code=exit_code,
            timed_out=timed_out,
            duration=max(0.0, duration),
            output_tail=kept,
            truncated=truncated,
        )
        self._index[record.id] = None if timed_out else exit_code
        if len(self._listed) < SUMMARY_COMMANDS:
            one_line = " ".join(shown.split())
            self._listed.append(
                CommandLine(record.id, head(one_line, 200)[0], exit_code, timed_out)
            )
        self._append(self._commands, record.model_dump_json())
        return record

    def usage(self, usage: Usage) -> None:
        self.total = self.total + usage
        self.requests += 1
        self._write_usage()

    # -- what the agent reads -------------------------------------------------------------------

    @property
    def exit_codes(self) -> Mapping[int, int | None]:
        """Command id -> exit code (None: timed out or never started), as recorded in memory."""
        return dict(self._index)

    @property
    def commands(self) -> list[CommandLine]:
        """The first SUMMARY_COMMANDS commands, for summary.md."""
        return list(self._listed)

    @property
    def command_count(self) -> int:
        return len(self._index)

    def note(self, text: str) -> None:
        """A transcript entry of the agent's own (why it stopped, what it decided)."""
        if not self._closed:
            self.transcript({"kind": "note", "text": text})

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for handle in (self._transcript, self._commands):
            with contextlib.suppress(OSError, ValueError):
                handle.close()
        with contextlib.suppress(OSError):
            self._write_usage()
        with contextlib.suppress(OSError):
            os.close(self._dir)

    # -- inside ---------------------------------------------------------------------------------

    def _clean(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return self._head(value, MAX_STRING)[0]
        if value is None or isinstance(value, bool | int | float):
            return value
        if depth >= MAX_DEPTH:
            return "[nested too deeply]"
        if isinstance(value, Mapping):
            return {
                self._clean(str(k), depth + 1): self._clean(v, depth + 1) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._clean(v, depth + 1) for v in value]
        if hasattr(value, "model_dump"):  # a pydantic model: its JSON form
            return self._clean(value.model_dump(mode="json"), depth + 1)
        return self._clean(repr(value), depth + 1)

    def _head(self, text: str, limit: int) -> tuple[str, bool]:
        """The masked head of `text` (masked in a wider window, then cut)."""
        masked = self._mask(scrub(text[: 4 * limit]))
        shown, cut = head(masked, limit)
        if not cut and len(text) > 4 * limit:
            return masked + f"\n[... {len(text) - 4 * limit} more characters cut]", True
        return shown, cut

    @staticmethod
    def _append(handle: IO[str], line: str) -> None:
        handle.write(line + "\n")
        handle.flush()

    def _write_usage(self) -> None:
        data = {
            "input_tokens": self.total.input_tokens,
            "output_tokens": self.total.output_tokens,
            "requests": self.requests,
        }
        # Rewritten whole per request; not synced, the manifest's write is the run's last word.
        replace_at(self._dir, USAGE_FILE, (json.dumps(data) + "\n").encode(), sync=False)
