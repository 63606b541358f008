from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from holon.secrets import (
    SECRET_PREFIXES,
    Redactor,
    StreamRedactor,
    mask_secret_looking,
    secret_kind,
    secret_prefix,
)


@pytest.mark.parametrize("prefix", SECRET_PREFIXES)
def test_prefixes_detected(prefix: str) -> None:
    assert secret_prefix(prefix + "0123456789abcdef") is not None


@pytest.mark.parametrize(
    "value",
    [
        "0123456789abcdef0123456789abcdef01234567",
        "ABCDEF0123456789ABCDEF0123456789ABCDEF01",
        "main",
        "skeleton",
        "https://example.invalid",
        "",
    ],
)
def test_not_secrets(value: str) -> None:
    assert secret_prefix(value) is None


def test_redactor() -> None:
    redact = Redactor(["ghp_supersecretvalue", "abc"])
    assert redact("token ghp_supersecretvalue and abc") == "token *** and abc"
    redact.add("sk-ant-other")
    assert redact("x sk-ant-other") == "x ***"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("https://x-access-token:abc123@github.com/o/r.git", "password in a URL"),
        ("postgres://app:hunter2@db/prod", "password in a URL"),
        ("Authorization: token 0123456789abcdef0123456789abcdef01234567", "after 'token'"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "after 'Bearer'"),
        ("--header=Authorization: bearer abcdef123456789", "after 'bearer'"),
        ("see ghp_abcdefghijklmnop in the middle", "starting with 'ghp_'"),
        ("https://ghp_abcdefghijklmnop@github.com/o/r", "starting with 'ghp_'"),
        ("ghp_0123456789", "starts with 'ghp_'"),
    ],
)
def test_secret_kind_finds_secrets_inside_values(value: str, kind: str) -> None:
    found = secret_kind(value)
    assert found is not None
    assert kind in found


@pytest.mark.parametrize(
    "value",
    [
        "use token authentication everywhere",
        "task-list",
        "https://github.com/o/r.git",
        "git@github.com:o/r.git",
        "0123456789abcdef0123456789abcdef01234567",
        "http://localhost:8080/path",
        "Bearer of bad news",
    ],
)
def test_secret_kind_ignores_ordinary_values(value: str) -> None:
    assert secret_kind(value) is None


@pytest.mark.parametrize("prefix", ["", "x", "xy", "xyz"])
def test_base64_of_a_secret_is_redacted_at_any_alignment(prefix: str) -> None:
    secret = "sk-ant-api03-verysecretvalue"
    encoded = base64.b64encode(prefix.encode() + secret.encode() + b" tail").decode()
    redact = Redactor([secret])
    assert "***" in redact(f"log: {encoded}")
    assert redact.found_in(encoded.encode())


def test_percent_encoded_secret_is_redacted() -> None:
    secret = "p@ss/word+with:chars"
    redact = Redactor([secret])
    assert redact(f"url=https://h/?k={quote(secret, safe='')}") == "url=https://h/?k=***"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_stream_redactor_finds_values_split_across_chunks(size: int) -> None:
    secret = "ghp_streamSplitValue42"
    data = f"a{secret}b{secret}".encode()
    stream = StreamRedactor(Redactor([secret]))
    out = b"".join(stream.feed(data[i : i + size]) for i in range(0, len(data), size))
    out += stream.flush()
    assert out == b"a***b***"
    assert stream.replaced == 2


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("KeyError: 'ghp_" + "a1" * 18 + "'", "KeyError: '***'"),
        (
            "POST https://x-access-token:s3cretvalue@api.github.com/x",
            "POST https://***@api.github.com/x",
        ),
        ("Authorization: Bearer abcdef123456ghijkl", "Authorization: Bearer ***"),
        ("sha 0123456789abcdef0123456789abcdef01234567 stays", None),
        ("an ordinary line", None),
    ],
)
def test_secret_looking_words_are_masked_in_free_text(text: str, kept: str | None) -> None:
    assert mask_secret_looking(text) == (kept if kept is not None else text)
