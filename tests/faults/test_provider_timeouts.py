"""A provider that does not answer in time, over a real socket (tests/faults/model_faults.py):
a connection never accepted, a request never answered, an answer later than the read timeout,
a body that stalls halfway and one that breaks off halfway. Each request ends within the
timeouts the environment sets (`HOLON_MODEL_*`), is retried as often as the policy says, and
the error is one line naming the timeout and its length, never the key."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from holon.agent.conversation import UserMessage
from holon.agent.providers.base import ProviderError
from holon.agent.providers.openai import OpenAIProvider
from tests.faults.model_faults import TIMEOUT_FAULTS, ModelFault, faulty_model

KEY = "sk-proj-TIMEOUTkeyMUSTneverSHOW0123456789abcdef"
FAST = {
    "HOLON_MODEL_CONNECT_TIMEOUT": "500ms",
    "HOLON_MODEL_READ_TIMEOUT": "500ms",
    "HOLON_MODEL_RETRIES": "1",
}
# What the error says after its two requests, for each fault.
SAID = {
    "silent": "no answer from {origin} within the read timeout of 0.5s",
    "slow": "no answer from {origin} within the read timeout of 0.5s",
    "stall_mid_body": "answer from {origin} stalled: no data within the read timeout of 0.5s",
    "cut_mid_body": "answer from {origin} broke off",
}


def _ask(env: dict[str, str]) -> tuple[str, float]:
    provider = OpenAIProvider.from_env({"OPENAI_API_KEY": KEY, **env})
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        provider.complete("system", [UserMessage(text="hi")], [], max_tokens=10)
    return str(caught.value), time.monotonic() - started


@pytest.mark.parametrize("mode", [*TIMEOUT_FAULTS, "cut_mid_body"])
def test_a_provider_that_does_not_answer_in_time_ends_the_request_naming_the_timeout(
    mode: ModelFault, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with faulty_model(mode) as model:
        message, elapsed = _ask({**FAST, "OPENAI_BASE_URL": model.base_url})
        origin = model.base_url.removesuffix("/v1")
        assert len(model.requests) == 2  # HOLON_MODEL_RETRIES=1: the first and one retry
    expected = SAID[mode].format(origin=origin)
    assert message.startswith(f"openai: {expected} (gave up after 2 attempts in "), message
    # Two reads of at most 0.5 s and one backoff of at most 1 s, with room for a loaded machine.
    assert elapsed < 6, elapsed
    retried = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert len(retried) == 1, retried
    assert expected in retried[0], retried
    assert KEY not in message
    assert not [r for r in caplog.records if KEY in r.getMessage()]


@contextmanager
def _never_accepting() -> Iterator[str]:
    """A port whose accept queue is full: the kernel drops further SYNs, so a connect hangs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_a_connection_never_accepted_ends_at_the_connect_timeout() -> None:
    with _never_accepting() as base_url:
        message, elapsed = _ask({**FAST, "OPENAI_BASE_URL": base_url})
    origin = base_url.removesuffix("/v1")
    assert message.startswith(
        f"openai: could not connect to {origin} within the connect timeout of 0.5s "
        "(gave up after 2 attempts in "
    ), message
    assert elapsed < 6, elapsed


def test_the_retry_deadline_stops_the_retries() -> None:
    # Ten retries allowed, but none may start once the deadline (zero: right away) has passed.
    env = {**FAST, "HOLON_MODEL_RETRIES": "10", "HOLON_MODEL_RETRY_DEADLINE": "0"}
    with faulty_model("silent") as model:
        message, elapsed = _ask({**env, "OPENAI_BASE_URL": model.base_url})
        assert len(model.requests) == 1
    assert "(gave up after 1 attempt in " in message, message
    assert elapsed < 3, elapsed


def test_no_retry_at_all_with_zero_retries() -> None:
    with faulty_model("stall_mid_body") as model:
        message, _ = _ask({**FAST, "HOLON_MODEL_RETRIES": "0", "OPENAI_BASE_URL": model.base_url})
        assert len(model.requests) == 1
    assert "stalled" in message, message
    assert "(gave up after 1 attempt in " in message, message
