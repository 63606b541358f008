"""`holon closure derive EVIDENCE.json [--explain]`: exits with the code of the mapping table."""

from __future__ import annotations

import argparse
import json

from holon.cli._io import print_json, read_bytes


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    derive = sub.add_parser("derive", help="closure, lifecycle, exit code and conclusions as JSON")
    derive.add_argument("evidence", metavar="EVIDENCE.json", help="evidence document, or -")
    derive.add_argument("--explain", action="store_true", help="name the deciding rule and items")
    derive.add_argument(
        "--fail-on-waiting",
        action="store_true",
        help="report the job conclusion as failure when the work is not finished",
    )


def main(args: argparse.Namespace) -> int:
    from holon.closure.derive import derive_closure
    from holon.closure.evidence import parse_evidence
    from holon.closure.record import ClosureRecord

    evidence = parse_evidence(read_bytes(args.evidence), source=args.evidence)
    record = ClosureRecord.of(derive_closure(evidence), fail_on_waiting=args.fail_on_waiting)
    data = record.model_dump(mode="json")
    if args.explain:
        number = f"rule {record.rule_number}" if record.rule_number else "default"
        items = ", ".join(record.deciding_items) or "no item"
        rejected = (
            f"; rejected claims: {', '.join(record.rejected_claims)}"
            if record.rejected_claims
            else ""
        )
        data["explain"] = f"{number} ({record.rule}) decided on {items}: {record.detail}{rejected}"
    print_json(json.dumps(data, indent=2))
    return record.exit_code
