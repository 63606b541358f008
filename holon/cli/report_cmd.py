"""`holon report --state-dir D [--json | --markdown] [--since DATE]`: what Holon did and what it
cost, per skill and per ISO week, from a serve state directory (docs/report.md)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from holon.errors import InvalidInput


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state-dir", required=True, type=Path, metavar="D", help="the serve state directory"
    )
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="the report as JSON")
    shape.add_argument(
        "--markdown", action="store_true", help="a Markdown table (for GITHUB_STEP_SUMMARY)"
    )
    parser.add_argument(
        "--since",
        metavar="DATE",
        help="only what happened from DATE on (YYYY-MM-DD or an ISO time; UTC if no offset)",
    )


def parse_since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(
            f"--since: {text!r:.60} is not a date (YYYY-MM-DD) or ISO time"
        ) from None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def main(args: argparse.Namespace) -> int:
    from holon.report.aggregate import build_report
    from holon.report.render import to_json, to_markdown, to_text
    from holon.report.sources import read_state_dir

    since = parse_since(args.since)
    sources = read_state_dir(args.state_dir)
    report = build_report(
        events=sources.events,
        decisions=sources.decisions,
        actions=sources.actions,
        state=sources.state,
        since=since,
        dropped=sources.dropped,
    )
    if args.json:
        from holon.cli._io import print_json

        print_json(to_json(report))
        return 0
    text = to_markdown(report) if args.markdown else to_text(report)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
