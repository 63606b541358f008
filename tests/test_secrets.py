from __future__ import annotations

import pytest

from holon.secrets import SECRET_PREFIXES, Redactor, secret_prefix


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
