"""What a model answer says it used, read from the bytes the key proxy passed back, and the run's
running total.

Reading is pure (`usage_of`): a JSON answer's `usage` (Anthropic's `input_tokens`, prompt-cache
tokens included as the providers count them, and `output_tokens`; OpenAI's `prompt_tokens` and
`completion_tokens`) or, for a streamed answer, the same fields in its server-sent events
(Anthropic's `message_start` and `message_delta`, OpenAI's final chunk). An answer without usage
counts as a request of zero tokens: the proxy meters what the provider reports, never guesses.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from holon.runner.record import ModelUsage

# Cache tokens are input the model read: counted as the providers count them.
_INPUT_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "prompt_tokens",
)
_OUTPUT_KEYS = ("output_tokens", "completion_tokens")


@dataclass(frozen=True)
class Reading:
    """One answer's usage."""

    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _from_object(data: Any) -> Reading:
    if not isinstance(data, dict):
        return Reading()
    # Anthropic's message_start nests the message; message_delta carries usage at the top.
    message = data.get("message")
    source = message if isinstance(message, dict) and "usage" in message else data
    usage = source.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    model = source.get("model")
    return Reading(
        input_tokens=sum(_count(usage, key) for key in _INPUT_KEYS),
        output_tokens=sum(_count(usage, key) for key in _OUTPUT_KEYS),
        model=model if isinstance(model, str) and model else None,
    )


def _from_events(body: bytes) -> Reading:
    """The usage in a server-sent event stream: input from the first event that reports it,
    output from the last (Anthropic's message_delta counts cumulatively)."""
    input_tokens = output_tokens = 0
    model: str | None = None
    for line in body.splitlines():
        if not line.startswith(b"data:"):
            continue
        try:
            data = json.loads(line[5:])
        except (ValueError, RecursionError):
            continue
        reading = _from_object(data)
        input_tokens = input_tokens or reading.input_tokens
        output_tokens = reading.output_tokens or output_tokens
        model = model or reading.model
    return Reading(input_tokens, output_tokens, model)


def usage_of(body: bytes, content_type: str) -> Reading:
    """The usage one answer reports; zero when it reports none or is not readable."""
    if "text/event-stream" in content_type.lower():
        return _from_events(body)
    try:
        return _from_object(json.loads(body))
    except (ValueError, RecursionError):
        return _from_events(body) if body.lstrip().startswith(b"event:") else Reading()


class Meter:
    """The run's total across the proxy's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._input = 0
        self._output = 0
        self._requests = 0
        self._model: str | None = None

    def add(self, reading: Reading) -> None:
        with self._lock:
            self._input += reading.input_tokens
            self._output += reading.output_tokens
            self._requests += 1
            self._model = reading.model or self._model

    @property
    def tokens(self) -> int:
        with self._lock:
            return self._input + self._output

    def usage(self) -> ModelUsage:
        with self._lock:
            return ModelUsage(
                input_tokens=self._input,
                output_tokens=self._output,
                requests=self._requests,
                model=self._model,
            )
