"""The providers' HTTP layer: retries and their waits, what is final, and errors without secrets."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
import requests
import responses

from holon.agent.providers import http as http_module
from holon.agent.providers.base import ProviderError
from holon.agent.providers.http import error_detail, parse_retry_after
from tests.providers.conftest import ANTHROPIC_KEY, FakeTime, bodies

URL = "https://api.example.test/v1/messages"
OK = {"ok": True}
ANTHROPIC = bodies("anthropic-messages")
OPENAI = bodies("openai-chat")


def post(fake_time: FakeTime, **policy: float) -> object:
    client = fake_time.http("anthropic", **policy)
    client.protect(ANTHROPIC_KEY)
    return client.post(URL, {"x-api-key": ANTHROPIC_KEY}, {"q": 1})


# Retry-After and error bodies, on their own


def test_retry_after_in_seconds_in_milliseconds_and_as_a_date() -> None:
    now = 1_767_225_600.0
    assert parse_retry_after({"retry-after": "7"}, now) == 7
    assert parse_retry_after({"retry-after": " 1.5 "}, now) == 1.5
    # OpenAI's more precise header wins over the standard one
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "7"}, now) == 0.25
    date = format_datetime(datetime.fromtimestamp(now + 42, UTC), usegmt=True)
    assert parse_retry_after({"retry-after": date}, now) == pytest.approx(42)
    past = format_datetime(datetime.fromtimestamp(now - 60, UTC), usegmt=True)
    assert parse_retry_after({"retry-after": past}, now) == 0
    for bad in ("soon", "-3", "nan", "Mon, 99 Foo 2026 99:99:99 GMT", ""):
        assert parse_retry_after({"retry-after": bad}, now) is None, bad
    assert parse_retry_after({"retry-after-ms": "x", "retry-after": "2"}, now) == 2
    assert parse_retry_after({}, now) is None


def test_error_detail_reads_each_providers_envelope() -> None:
    anthropic = json.dumps(ANTHROPIC["error_authentication"]).encode()
    assert error_detail(anthropic) == "authentication_error: invalid x-api-key"
    openai = json.dumps(OPENAI["error_bad_request"]).encode()
    assert error_detail(openai).startswith("invalid_request_error invalid_type: Invalid type")
    assert error_detail(b'{"error": "model not loaded"}') == "model not loaded"
    assert error_detail(b'{"message": "busy"}') == "busy"
    assert error_detail(b"<html>Bad Gateway</html>") == "<html>Bad Gateway</html>"
    assert error_detail(b"[1, 2]") == "[1, 2]"


# What is retried, and how long it waits


@responses.activate
def test_429_waits_as_long_as_retry_after_says_then_succeeds(fake_time: FakeTime) -> None:
    responses.post(
        URL, status=429, json=ANTHROPIC["error_rate_limit"], headers={"retry-after": "7"}
    )
    responses.post(URL, json=OK)
    assert post(fake_time) == OK
    assert fake_time.waits == [7]
    assert len(responses.calls) == 2


@responses.activate
def test_retry_after_longer_than_the_cap_waits_the_cap(fake_time: FakeTime) -> None:
    responses.post(URL, status=429, headers={"retry-after": "3600"})
    responses.post(URL, status=429, headers={"retry-after-ms": "1500"})
    responses.post(URL, json=OK)
    assert post(fake_time, max_delay=30, max_total_wait=100) == OK
    assert fake_time.waits == [30, 1.5]


@responses.activate
def test_529_and_503_back_off_exponentially_then_succeed(fake_time: FakeTime) -> None:
    responses.post(URL, status=529, json=ANTHROPIC["error_overloaded"])
    responses.post(URL, status=503, body="Service Unavailable")
    responses.post(URL, status=502)
    responses.post(URL, json=OK)
    assert post(fake_time, base_delay=1) == OK
    assert fake_time.waits == [1, 2, 4]


def test_jitter_spreads_a_backoff_between_half_and_all_of_it() -> None:
    waits: list[float] = []
    for jitter in (0.0, 0.5, 1.0):
        client = http_module.JsonHttp("x", jitter=lambda j=jitter: j)
        waits.append(client._backoff(3))  # base 1s doubled twice: 4s
    assert waits == [2.0, 3.0, 4.0]


@responses.activate
def test_retries_exhausted_is_one_retryable_line(fake_time: FakeTime) -> None:
    for _ in range(5):
        responses.post(URL, status=529, json=ANTHROPIC["error_overloaded"])
    with pytest.raises(ProviderError) as caught:
        post(fake_time, attempts=5)
    assert caught.value.retryable is True
    assert caught.value.status == 529
    assert str(caught.value) == (
        "anthropic: HTTP 529 overloaded_error: Overloaded (gave up after 5 attempts in 15s)"
    )
    assert fake_time.waits == [1, 2, 4, 8]


@responses.activate
def test_the_total_wait_is_capped(fake_time: FakeTime) -> None:
    for _ in range(5):
        responses.post(URL, status=500, json=ANTHROPIC["error_api"])
    with pytest.raises(ProviderError, match=r"gave up after 3 attempts in 3s"):
        post(fake_time, attempts=5, max_total_wait=5)
    assert fake_time.waits == [1, 2]  # a third wait of 4s would pass 5s in all


@responses.activate
def test_a_connection_error_or_a_timeout_is_retried(fake_time: FakeTime) -> None:
    responses.post(URL, body=requests.ConnectionError("refused"))
    responses.post(URL, body=requests.ReadTimeout("slow"))
    responses.post(URL, json=OK)
    assert post(fake_time) == OK
    assert fake_time.waits == [1, 2]


@responses.activate
def test_a_connection_that_never_comes_gives_up_naming_the_host_only(fake_time: FakeTime) -> None:
    for _ in range(3):
        responses.post(URL, body=requests.ConnectionError(f"boom {ANTHROPIC_KEY}"))
    with pytest.raises(ProviderError) as caught:
        post(fake_time, attempts=3)
    assert str(caught.value) == (
        "anthropic: could not connect to https://api.example.test (gave up after 3 attempts in 3s)"
    )
    assert caught.value.retryable is True
    assert caught.value.status is None


@responses.activate
def test_timeouts_are_sent_with_every_request(fake_time: FakeTime) -> None:
    responses.post(URL, json=OK)
    post(fake_time, connect_timeout=3, read_timeout=90)
    assert responses.calls[0].request.req_kwargs["timeout"] == (3, 90)  # type: ignore[attr-defined]


# What is final


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, ANTHROPIC["error_invalid_request"], "invalid_request_error: max_tokens: Field"),
        (401, ANTHROPIC["error_authentication"], "authentication_error: invalid x-api-key"),
        (404, {"error": {"type": "not_found_error", "message": "model: x"}}, "not_found_error"),
    ],
)
@responses.activate
def test_client_errors_are_not_retried(
    fake_time: FakeTime, status: int, body: dict[str, object], expected: str
) -> None:
    responses.post(URL, status=status, json=body)
    with pytest.raises(ProviderError) as caught:
        post(fake_time)
    assert str(caught.value).startswith(f"anthropic: HTTP {status} {expected}")
    assert caught.value.retryable is False
    assert caught.value.status == status
    assert len(responses.calls) == 1
    assert fake_time.waits == []


@responses.activate
def test_a_redirect_is_not_followed_so_the_key_stays_with_its_host(fake_time: FakeTime) -> None:
    responses.post(URL, status=307, headers={"location": "https://elsewhere.test/steal"})
    responses.post("https://elsewhere.test/steal", json=OK)
    with pytest.raises(ProviderError, match=r"^anthropic: HTTP 307"):
        post(fake_time)
    assert [c.request.url for c in responses.calls] == [URL]


@pytest.mark.parametrize(
    "body", [b"not json", b'{"content": [', b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000]
)
@responses.activate
def test_a_body_that_is_not_json_is_a_provider_error(fake_time: FakeTime, body: bytes) -> None:
    responses.post(URL, body=body, content_type="application/json")
    with pytest.raises(ProviderError) as caught:
        post(fake_time)
    assert str(caught.value) == f"anthropic: answer was not JSON (HTTP 200, {len(body)} bytes)"
    assert caught.value.retryable is False
    assert len(responses.calls) == 1


@responses.activate
def test_an_answer_larger_than_the_bound_is_refused(
    fake_time: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http_module, "MAX_RESPONSE_BYTES", 1000)
    responses.post(URL, json={"text": "x" * 2000})
    with pytest.raises(ProviderError, match=r"larger than 1000 bytes"):
        post(fake_time)


# Secrets


@responses.activate
def test_the_key_never_shows_in_an_error_or_a_log_record(
    fake_time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {
        "type": "error",
        "error": {
            "type": "authentication_error",
            "message": f"bad key {ANTHROPIC_KEY}\nsecond line",
        },
    }
    responses.post(URL, status=503, json=echo)
    responses.post(URL, status=401, json=echo)
    with pytest.raises(ProviderError) as caught:
        post(fake_time)
    message = str(caught.value)
    assert ANTHROPIC_KEY not in message
    assert "\n" not in message
    assert message == "anthropic: HTTP 401 authentication_error: bad key *** second line"
    assert caplog.records, "the retry is logged"
    assert all(ANTHROPIC_KEY not in r.getMessage() for r in caplog.records)
    assert "retrying in 1.0s (attempt 2 of 5)" in caplog.text


@responses.activate
def test_an_error_line_is_bounded_and_secret_looking_words_are_masked(
    fake_time: FakeTime,
) -> None:
    other_token = "ghp_" + "A" * 36
    responses.post(URL, status=400, body=f"{other_token} " + "y" * 5000)
    with pytest.raises(ProviderError) as caught:
        post(fake_time)
    message = str(caught.value)
    assert other_token not in message
    assert len(message) <= http_module.ERROR_TEXT_LIMIT


@responses.activate
def test_a_bad_header_value_never_echoes_the_key(fake_time: FakeTime) -> None:
    client = fake_time.http("anthropic")
    bad_key = ANTHROPIC_KEY + "\nX-Injected: 1"
    client.protect(bad_key)
    with pytest.raises(ProviderError) as caught:
        client.post(URL, {"x-api-key": bad_key}, {})
    assert str(caught.value) == (
        "anthropic: request to https://api.example.test failed (InvalidHeader)"
    )


@responses.activate
def test_netrc_is_never_read(
    fake_time: FakeTime, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    netrc = Path(str(tmp_path)) / "netrc"
    netrc.write_text("machine api.example.test login someone password hunter22\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    responses.post(URL, json=OK)
    fake_time.http("openai").post(URL, {}, {})
    assert "Authorization" not in responses.calls[0].request.headers
