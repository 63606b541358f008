"""Usage read from answers as the providers shape them (pure)."""

from __future__ import annotations

import json

from holon.runner.model_meter import Meter, Reading, usage_of
from tests.support.fake_model import ANTHROPIC_ANSWER, OPENAI_ANSWER


def test_anthropic_usage_counts_the_prompt_cache_as_input() -> None:
    reading = usage_of(json.dumps(ANTHROPIC_ANSWER).encode(), "application/json")
    assert reading == Reading(input_tokens=14, output_tokens=7, model="claude-fake-1")


def test_openai_usage() -> None:
    reading = usage_of(json.dumps(OPENAI_ANSWER).encode(), "application/json; charset=utf-8")
    assert reading == Reading(input_tokens=20, output_tokens=5, model="gpt-fake-1")


def test_an_openai_stream_reports_usage_in_its_last_chunk() -> None:
    body = (
        b'data: {"model":"gpt-fake-1","choices":[{"delta":{"content":"hi"}}]}\n\n'
        b'data: {"model":"gpt-fake-1","choices":[],"usage":{"prompt_tokens":8,'
        b'"completion_tokens":3}}\n\n'
        b"data: [DONE]\n\n"
    )
    assert usage_of(body, "text/event-stream") == Reading(8, 3, "gpt-fake-1")


def test_what_reports_no_usage_counts_nothing() -> None:
    assert usage_of(b"not json", "application/json") == Reading()
    assert usage_of(b"[1, 2]", "application/json") == Reading()
    assert usage_of(b'{"usage": {"input_tokens": -5, "output_tokens": true}}', "") == Reading()
    assert usage_of(b"[" * 100_000, "application/json") == Reading()  # too deep to decode


def test_the_meter_adds_up_and_keeps_the_last_model() -> None:
    meter = Meter()
    meter.add(Reading(10, 2, "a"))
    meter.add(Reading(0, 0, None))
    meter.add(Reading(1, 1, "b"))
    usage = meter.usage()
    assert (usage.input_tokens, usage.output_tokens, usage.requests, usage.model) == (11, 3, 3, "b")
    assert meter.tokens == 14
