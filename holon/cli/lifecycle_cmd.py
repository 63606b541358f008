"""`holon lifecycle normalize [VALUE] [--run-outcome R] [--phase P] [--question-id Q]`."""

from __future__ import annotations

import argparse

from holon.cli._io import print_json


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    norm = sub.add_parser("normalize", help="canonical lifecycle outcome for a value")
    norm.add_argument("value", nargs="?", help="a lifecycle_outcome value (canonical or legacy)")
    norm.add_argument("--run-outcome", help="legacy run_outcome, read when VALUE is absent")
    norm.add_argument("--phase", help="current_phase, read when neither is present")
    norm.add_argument("--question-id", help="question metadata proving a question was asked")


def main(args: argparse.Namespace) -> int:
    from holon.closure.lifecycle import resolve
    from holon.errors import InvalidInput

    if not (args.value or args.run_outcome or args.phase):
        raise InvalidInput("lifecycle normalize: give VALUE, --run-outcome or --phase")
    normalized = resolve(
        lifecycle_outcome=args.value,
        run_outcome=args.run_outcome,
        current_phase=args.phase,
        question_id=args.question_id,
    )
    print_json(normalized.model_dump_json(indent=2))
    return 0
