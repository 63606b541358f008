"""`holon gateway normalize --event NAME --payload FILE [--delivery ID] [--signature SIG
--secret-env VAR]`: the EventEnvelope as JSON; any refusal is one line and exit 64."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    norm = sub.add_parser("normalize", help="a GitHub event payload as an EventEnvelope")
    norm.add_argument("--event", required=True, help="the event name (X-GitHub-Event)")
    norm.add_argument("--payload", required=True, metavar="FILE", help="payload JSON, or -")
    norm.add_argument("--delivery", metavar="ID", help="X-GitHub-Delivery, when known")
    norm.add_argument("--signature", metavar="SIG", help="X-Hub-Signature-256 to verify")
    norm.add_argument(
        "--secret-env",
        metavar="VAR",
        action="append",
        default=[],
        help="environment variable holding the webhook secret (twice during a rotation)",
    )
    norm.add_argument("--mention", default="holon", help="the @mention that also commands Holon")


def main(args: argparse.Namespace) -> int:
    from holon.cli._common import env_values
    from holon.cli._io import print_json, read_bytes
    from holon.errors import InvalidInput
    from holon.gateway.commands import parse_command
    from holon.gateway.webhook import from_webhook

    try:
        parse_command("", mention=args.mention)  # validates the mention name up front
    except ValueError as exc:
        raise InvalidInput(f"--mention: {exc}") from None
    body = read_bytes(args.payload)
    secrets = env_values(args.secret_env)
    if args.signature is None and secrets:
        raise InvalidInput("--secret-env given without --signature: nothing to verify")
    headers = {"X-GitHub-Event": args.event}
    if args.delivery:
        headers["X-GitHub-Delivery"] = args.delivery
    if args.signature is not None:
        if not secrets:
            raise InvalidInput("--signature needs --secret-env VAR holding the webhook secret")
        headers["X-Hub-Signature-256"] = args.signature
        envelope = from_webhook(
            headers, body, secrets, received_at=datetime.now(UTC), mention=args.mention
        )
    else:
        from holon.gateway.github import normalize
        from holon.gateway.payload import decode_payload

        envelope = normalize(
            args.event,
            decode_payload(body, source=args.payload),
            via="webhook",
            received_at=datetime.now(UTC),
            delivery=args.delivery,
            mention=args.mention,
        )
    print_json(envelope.model_dump_json(indent=2))
    return 0
