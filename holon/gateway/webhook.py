"""Webhook deliveries: `X-Hub-Signature-256` verified before the body is even parsed."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.gateway.payload import MAX_PAYLOAD_BYTES, decode_payload


class SignatureError(InvalidInput):
    """The delivery's signature is missing or does not match any configured secret."""


_SIGNATURE = re.compile(r"sha256=[0-9a-f]{64}")


def signature_for(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


class SignatureVerifier:
    """Checks `X-Hub-Signature-256` over a body fed chunk by chunk, so a listener never holds
    more than a chunk of an unverified body.

    The header is checked on construction: a missing or malformed one (not `sha256=` and 64
    lowercase hex digits, non-ASCII included) is refused before any byte of the body is read.
    """

    def __init__(self, signature: str | None, secrets: Sequence[str]) -> None:
        if not secrets:
            raise SignatureError("no webhook secret configured: refusing unsigned deliveries")
        if not signature:
            raise SignatureError("delivery has no X-Hub-Signature-256 header")
        if not signature.startswith("sha256="):
            raise SignatureError("X-Hub-Signature-256 is not a sha256= signature")
        if not _SIGNATURE.fullmatch(signature):
            raise SignatureError("X-Hub-Signature-256 is not sha256= and 64 hex digits")
        self._expected = signature.encode("ascii")
        self._macs = [hmac.new(s.encode("utf-8"), digestmod=hashlib.sha256) for s in secrets]

    def update(self, chunk: bytes) -> None:
        for mac in self._macs:
            mac.update(chunk)

    def verify(self) -> None:
        """SignatureError unless the body fed so far is signed by one of the secrets."""
        matched = False
        for mac in self._macs:
            # compare_digest for every secret, no early exit: timing says nothing about which.
            matched |= hmac.compare_digest(b"sha256=" + mac.hexdigest().encode(), self._expected)
        if not matched:
            raise SignatureError("X-Hub-Signature-256 does not match the webhook secret")


def verify_signature(body: bytes, signature: str | None, secrets: Sequence[str]) -> None:
    """Accept the delivery if it is signed by any of `secrets` (two during a rotation)."""
    verifier = SignatureVerifier(signature, secrets)
    verifier.update(body)
    verifier.verify()


def from_webhook(
    headers: Mapping[str, str],
    body: bytes,
    secrets: Sequence[str],
    *,
    received_at: datetime,
    mention: str | None = "holon",
) -> EventEnvelope:
    """One delivery (headers as received, body as bytes) to its envelope."""
    lower = {k.lower(): v for k, v in headers.items()}
    if len(body) > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"delivery: {len(body)} bytes is over the 25 MiB limit")
    verify_signature(body, lower.get("x-hub-signature-256"), secrets)
    return verified_delivery(lower, body, received_at=received_at, mention=mention)


def verified_delivery(
    headers: Mapping[str, str],
    body: bytes,
    *,
    received_at: datetime,
    mention: str | None = "holon",
) -> EventEnvelope:
    """The envelope of a delivery whose signature the caller has already verified."""
    lower = {k.lower(): v for k, v in headers.items()}
    event = lower.get("x-github-event")
    if not event:
        raise InvalidInput("delivery has no X-GitHub-Event header")
    delivery = lower.get("x-github-delivery") or None
    payload = decode_payload(body, source=f"delivery {delivery or '(no id)'}")
    return normalize(
        event, payload, via="webhook", received_at=received_at, delivery=delivery, mention=mention
    )
