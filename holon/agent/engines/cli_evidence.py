"""What a CLI engine hands the Recorder: its events clipped, its credentials redacted, its
commands indexed by text (a CLI cites the commands it ran by text, not by our ids).

The CLI ran with its credential in its environment, so anything it printed may hold it: every
string goes through a Redactor of those values before it is recorded.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from holon.agent.conversation import Usage
from holon.agent.engine import CommandRecord, Recorder
from holon.agent.engines.cli_process import StopCli
from holon.secrets import Redactor, mask_secret_looking

FIELD_LIMIT = 8 * 1024  # characters of one string in a transcript entry
LIST_LIMIT = 200  # items of one list in a transcript entry
_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})


def clip(value: Any, limit: int = FIELD_LIMIT) -> Any:
    """`value` with long strings cut and long lists shortened, saying how much was left out.
    Nesting is bounded already (holon.jsonio refuses deeper than 100 levels)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return value[:limit] + f" [... {len(value) - limit} characters cut]"
    if isinstance(value, list):
        items = [clip(item, limit) for item in value[:LIST_LIMIT]]
        if len(value) > LIST_LIMIT:
            items.append(f"[... {len(value) - LIST_LIMIT} items cut]")
        return items
    if isinstance(value, dict):
        return {str(key): clip(item, limit) for key, item in value.items()}
    return value


def one_line(text: str, limit: int = 300) -> str:
    """Text as one short line for an error message, secret-looking words masked."""
    line = mask_secret_looking(" ".join(text.split()))
    return line if len(line) <= limit else line[: limit - 3] + "..."


def script_of(command: str) -> str | None:
    """The script of `bash -lc '<script>'` (how Codex reports the commands it ran), else None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in ("-c", "-lc"):
        return words[2]
    return None


class CliRecorder:
    """The Recorder as a CLI engine uses it."""

    def __init__(
        self,
        recorder: Recorder,
        engine: str,
        secrets: Iterable[str],
        max_tokens: int | None = None,
    ) -> None:
        self.recorder = recorder
        self.engine = engine
        self.redact = Redactor(secrets)
        self.max_tokens = max_tokens
        self.usage = Usage()
        self.requests = 0
        self.commands: list[CommandRecord] = []
        self._by_text: dict[str, int] = {}

    def scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.scrub(item) for item in value]
        if isinstance(value, dict):
            return {key: self.scrub(item) for key, item in value.items()}
        return value

    def event(self, event: Mapping[str, Any]) -> None:
        entry = {"engine": self.engine, "kind": "event", "event": clip(dict(event))}
        self.recorder.transcript(self.scrub(entry))

    def note(self, text: str) -> None:
        entry = {"engine": self.engine, "kind": "note", "text": mask_secret_looking(text)}
        self.recorder.transcript(self.scrub(entry))

    def command(
        self,
        command: str,
        exit_code: int | None,
        *,
        duration: float,
        output: str,
        timed_out: bool = False,
    ) -> CommandRecord:
        record = self.recorder.command(
            self.redact(command),
            exit_code,
            duration=max(0.0, duration),
            output=self.redact(output),
            timed_out=timed_out,
        )
        self.commands.append(record)
        # The last command with a text is the one a citation of that text means.
        self._by_text[command.strip()] = record.id
        script = script_of(command)
        if script is not None:
            self._by_text[script.strip()] = record.id
        return record

    def command_id(self, text: str) -> int | None:
        """The id of the last recorded command run as exactly `text` (or as `bash -lc text`)."""
        return self._by_text.get(text.strip())

    def add_usage(self, usage: Usage) -> None:
        """One model request's usage; StopCli when the run's token budget is spent."""
        self.recorder.usage(usage)
        self.usage = self.usage + usage
        self.requests += 1
        if self.max_tokens is not None and self.usage.total > self.max_tokens:
            raise StopCli("token_budget")
