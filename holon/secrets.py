"""Recognizing and redacting secrets.

Recognizing: a value is secret-looking when it starts with a known token prefix, holds a token
with such a prefix as a separate word, carries a password in a URL (`https://user:pw@host`), or
has a token after `token ` / `Bearer `. A 40-hex git sha on its own never is.

Redacting: the values Holon forwards to the agent are replaced by a fixed marker wherever Holon
records or prints something, in their plain form and their common encodings (base64 at any
alignment, URL percent-encoding), also when a value is split across chunks of a stream.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator
from urllib.parse import quote

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
REDACTED = "***"
# Shorter values would redact ordinary words; real tokens are long.
MIN_SECRET_LENGTH = 6

_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_PREFIXED_WORD = re.compile(
    r"(?<![A-Za-z0-9_-])(" + "|".join(re.escape(p) for p in SECRET_PREFIXES) + r")[A-Za-z0-9_-]{6,}"
)
# A match starts only where a scheme's run of characters does: tried at every position of a long
# run of letters (an agent's output), the scheme part would be quadratic.
_URL_PASSWORD = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
_AFTER_SCHEME_WORD = re.compile(r"(?i)\b(token|bearer)\s+([A-Za-z0-9._~+/=-]{12,})")


def secret_prefix(value: str) -> str | None:
    """The prefix that makes `value` look like a secret, or None."""
    text = value.strip()
    if _SHA.fullmatch(text):
        return None
    for prefix in SECRET_PREFIXES:
        if text.startswith(prefix):
            return prefix
    return None


def secret_kind(value: str) -> str | None:
    """Why `value` looks like it holds a secret (never the secret itself), or None."""
    prefix = secret_prefix(value)
    if prefix is not None:
        return f"starts with {prefix!r}"
    found = _PREFIXED_WORD.search(value)
    if found is not None:
        return f"holds a token starting with {found.group(1)!r}"
    if _URL_PASSWORD.search(value):
        return "holds a password in a URL"
    for match in _AFTER_SCHEME_WORD.finditer(value):
        token = match.group(2)
        if any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
            return f"holds a token after {match.group(1)!r}"
    return None


def mask_secret_looking(text: str) -> str:
    """`text` with every secret-looking word (a prefixed token, a URL password, a token after
    `token ` / `Bearer `) replaced by the marker: for text Holon did not forward but may still
    carry one, such as a traceback."""
    text = _PREFIXED_WORD.sub(REDACTED, text)
    text = _URL_PASSWORD.sub(lambda m: m.group(0).split("://", 1)[0] + f"://{REDACTED}@", text)
    return _AFTER_SCHEME_WORD.sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def _base64_cores(raw: bytes) -> list[bytes]:
    """The base64 text that `raw` always encodes to, wherever it sits in a longer input.

    A value starting at byte offset 0, 1 or 2 (mod 3) of the encoded input shares with the
    encoding only the characters that depend on its bytes alone.
    """
    cores = []
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw)
        start = 4 if pad else 0
        end = 4 * ((pad + len(raw)) // 3)
        core = encoded[start:end]
        if len(core) >= 8:
            cores.append(core)
            cores.append(core.replace(b"+", b"-").replace(b"/", b"_"))
    return cores


def secret_forms(value: str) -> list[bytes]:
    """The byte strings whose presence means `value` is there: plain, base64, percent-encoded."""
    if len(value) < MIN_SECRET_LENGTH:
        return []
    raw = value.encode("utf-8")
    forms = [raw, *_base64_cores(raw)]
    quoted = quote(value, safe="").encode("ascii")
    if quoted != raw:
        forms.append(quoted)
    return sorted(set(forms), key=len, reverse=True)


class Redactor:
    """Replaces known secret values in text before it is printed or recorded."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: list[str] = []
        self._pattern: re.Pattern[bytes] | None = None
        for value in values:
            self.add(value)

    def add(self, value: str) -> None:
        if len(value) >= MIN_SECRET_LENGTH and value not in self._values:
            self._values.append(value)
            forms = sorted(
                {f for v in self._values for f in secret_forms(v)}, key=len, reverse=True
            )
            self._pattern = re.compile(b"|".join(re.escape(f) for f in forms))

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(self._values)

    @property
    def longest(self) -> int:
        """The longest byte form: how much of a stream to hold back across chunk borders."""
        return max((len(f) for v in self._values for f in secret_forms(v)), default=0)

    def __bool__(self) -> bool:
        return bool(self._values)

    def finditer(self, data: bytes) -> Iterator[re.Match[bytes]]:
        return iter(()) if self._pattern is None else self._pattern.finditer(data)

    def found_in(self, data: bytes) -> bool:
        return self._pattern is not None and self._pattern.search(data) is not None

    def redact_bytes(self, data: bytes) -> tuple[bytes, int]:
        """`data` with every secret form replaced by the marker, and how many were replaced."""
        if self._pattern is None:
            return data, 0
        return self._pattern.subn(REDACTED.encode(), data)

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self.redact_bytes(text.encode("utf-8", "surrogatepass"))[0].decode(
            "utf-8", "surrogatepass"
        )


class StreamRedactor:
    """Redacts a byte stream given in arbitrary chunks: a value split across chunks is still found.

    Holds back the last `longest - 1` bytes of each chunk until the next one (or `flush`) shows
    whether they start a secret.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._keep = max(redactor.longest - 1, 0)
        self._carry = b""
        self.replaced = 0

    def feed(self, chunk: bytes) -> bytes:
        if not self._redactor:
            return chunk
        data = self._carry + chunk
        safe_end = len(data) - self._keep
        if safe_end <= 0:
            self._carry = data
            return b""
        out = []
        position = 0
        for match in self._redactor.finditer(data):
            if match.start() >= safe_end:
                break
            out.append(data[position : match.start()])
            out.append(REDACTED.encode())
            self.replaced += 1
            position = match.end()
        cut = max(position, safe_end)
        out.append(data[position:cut])
        self._carry = data[cut:]
        return b"".join(out)

    def flush(self) -> bytes:
        data, self._carry = self._carry, b""
        redacted, count = self._redactor.redact_bytes(data)
        self.replaced += count
        return redacted
