"""Recognizing and redacting secrets (DESIGN.md section 7).

A value is secret-looking when it starts with a known token prefix. A 40-hex git sha never is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SECRET_PREFIXES: tuple[str, ...] = (
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-ant-",
    "sk-",
    "AKIA",
    "xox",
)

_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


def secret_prefix(value: str) -> str | None:
    """The prefix that makes `value` look like a secret, or None."""
    text = value.strip()
    if _SHA.fullmatch(text):
        return None
    for prefix in SECRET_PREFIXES:
        if text.startswith(prefix):
            return prefix
    return None


class Redactor:
    """Replaces known secret values in text before it is printed or journaled."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        # Short values would redact ordinary words; real tokens are long.
        self._values = sorted({v for v in values if len(v) >= 6}, key=len, reverse=True)

    def add(self, value: str) -> None:
        if len(value) >= 6 and value not in self._values:
            self._values.append(value)
            self._values.sort(key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, "***")
        return text
