"""`holon handoff render CLOSURE.json [--format comment|summary|text]`.

CLOSURE.json is what `holon closure derive` prints, optionally with a `context` object (subject,
title, evidence lines, artifacts, state, details) describing the work.
"""

from __future__ import annotations

import argparse
import sys

from holon.cli._io import read_json


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    render = sub.add_parser("render", help="the handoff as a comment, step summary or text")
    render.add_argument("closure", metavar="CLOSURE.json", help="closure record, or -")
    render.add_argument("--format", choices=["comment", "summary", "text"], default="comment")


def main(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from holon.closure.handoff import HandoffContext, build_handoff, render_handoff
    from holon.closure.record import parse_closure_record
    from holon.errors import InvalidInput
    from holon.validation import describe_validation_error

    data = read_json(args.closure)
    if not isinstance(data, dict):
        raise InvalidInput(f"{args.closure}: expected a JSON object")
    raw_context = data.pop("context", None) or {}
    data.pop("explain", None)
    record = parse_closure_record(data, args.closure)
    try:
        context = HandoffContext.model_validate(raw_context)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(f"{args.closure}: context", exc)) from None
    handoff = build_handoff(record.closure(), record.report(), context)
    sys.stdout.write(render_handoff(handoff, args.format))
    return 0
