"""Webhook deliveries: `X-Hub-Signature-256` verified before the body is even parsed."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from datetime import datetime

from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.gateway.payload import MAX_PAYLOAD_BYTES, decode_payload


class SignatureError(InvalidInput):
    """The delivery's signature is missing or does not match any configured secret."""


def signature_for(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_signature(body: bytes, signature: str | None, secrets: Sequence[str]) -> None:
    """Accept the delivery if it is signed by any of `secrets` (two during a rotation)."""
    if not secrets:
        raise SignatureError("no webhook secret configured: refusing unsigned deliveries")
    if not signature:
        raise SignatureError("delivery has no X-Hub-Signature-256 header")
    if not signature.startswith("sha256="):
        raise SignatureError("X-Hub-Signature-256 is not a sha256= signature")
    matched = False
    for secret in secrets:
        # compare_digest for every secret, no early exit: timing says nothing about which.
        matched |= hmac.compare_digest(signature_for(body, secret), signature)
    if not matched:
        raise SignatureError("X-Hub-Signature-256 does not match the webhook secret")


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
    event = lower.get("x-github-event")
    if not event:
        raise InvalidInput("delivery has no X-GitHub-Event header")
    delivery = lower.get("x-github-delivery") or None
    payload = decode_payload(body, source=f"delivery {delivery or '(no id)'}")
    return normalize(
        event, payload, via="webhook", received_at=received_at, delivery=delivery, mention=mention
    )
