"""`holon closure derive EVIDENCE.json [--explain]`: exits with the code of the mapping table.

A file is streamed (holon/closure/stream.py): any number of items in flat memory. Deciding items
and rejected claims past `stream.MAX_LISTED` are written out as they are merged from disk: the
same JSON, never held whole.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from holon.cli._io import print_json
from holon.terminal import json_text

if TYPE_CHECKING:
    from holon.closure.record import ClosureRecord


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
    from holon.closure import stream
    from holon.closure.record import ClosureRecord

    derived = stream.derive_file(args.evidence, max_listed=stream.MAX_LISTED)
    record = ClosureRecord.of(derived.closure, fail_on_waiting=args.fail_on_waiting)
    data = record.model_dump(mode="json")
    if derived.whole:
        if args.explain:
            data["explain"] = _explain(record, record.deciding_items, record.rejected_claims)
        print_json(json.dumps(data, indent=2))
        return record.exit_code
    # Long lists: placeholders in the JSON, replaced by the ids as they are merged from disk.
    token = secrets.token_hex(16)
    lists: dict[str, Callable[[], Iterator[str]]] = {
        f"l1{token}": derived.deciding_items,
        f"l2{token}": derived.rejected_claims,
    }
    inline: dict[str, Callable[[], Iterator[str]]] = {
        f"x1{token}": derived.deciding_items,
        f"x2{token}": derived.rejected_claims,
    }
    data["deciding_items"], data["rejected_claims"] = list(lists)
    if args.explain:
        named = [name for name, ids in inline.items() if next(ids(), None) is not None]
        data["explain"] = _explain(
            record, [n for n in named if n.startswith("x1")], [n for n in named if n[:2] == "x2"]
        )
    out, held = sys.stdout, []
    for piece in _pieces(json.dumps(data, indent=2), lists, inline):
        held.append(piece)
        if len(held) >= 4096:
            out.write(json_text("".join(held)))
            held.clear()
    out.write(json_text("".join(held)) + "\n")
    return record.exit_code


def _pieces(
    text: str,
    lists: dict[str, Callable[[], Iterator[str]]],
    inline: dict[str, Callable[[], Iterator[str]]],
) -> Iterator[str]:
    """`text` with each quoted `lists` placeholder replaced by a JSON array (as `indent=2`
    lays out a top-level member's list) and each `inline` one by the ids joined with ", "
    inside the JSON string that holds it."""
    names = [re.escape(json.dumps(name)) for name in lists] + [re.escape(n) for n in inline]
    at = 0
    for match in re.finditer("|".join(names), text):
        yield text[at : match.start()]
        at = match.end()
        found = match.group()
        if found.startswith('"'):
            first = True
            for ident in lists[json.loads(found)]():
                yield ("[\n    " if first else ",\n    ") + json.dumps(ident)
                first = False
            yield "[]" if first else "\n  ]"
        else:
            for index, ident in enumerate(inline[found]()):
                yield (", " if index else "") + json.dumps(ident)[1:-1]
    yield text[at:]


def _explain(record: ClosureRecord, items: Sequence[str], rejected: Sequence[str]) -> str:
    number = f"rule {record.rule_number}" if record.rule_number else "default"
    named = ", ".join(items) or "no item"
    claims = f"; rejected claims: {', '.join(rejected)}" if rejected else ""
    return f"{number} ({record.rule}) decided on {named}: {record.detail}{claims}"
