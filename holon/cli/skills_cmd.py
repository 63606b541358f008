"""`holon skills list|show NAME`: the skill catalog the controller dispatches from."""

from __future__ import annotations

import argparse
import json


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="every skill with its description")
    listing.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="one skill's declared inputs and artifacts")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")


def main(args: argparse.Namespace) -> int:
    from holon.errors import InvalidInput
    from holon.skills.catalog import default_catalog

    catalog = default_catalog()
    if args.action == "list":
        skills = [catalog.get(name) for name in sorted(catalog.names())]
        if args.json:
            print(json.dumps([s.model_dump() for s in skills if s], indent=2))
        else:
            for skill in skills:
                if skill is not None:
                    print(f"{skill.name:<22} {skill.description}")
        return 0
    skill = catalog.get(args.name)
    if skill is None:
        known = ", ".join(sorted(catalog.names()))
        raise InvalidInput(f"unknown skill {args.name!r}: known skills are {known}")
    if args.json:
        print(skill.model_dump_json(indent=2))
        return 0
    print(f"{skill.name}: {skill.description}")
    print("inputs:")
    for item in skill.inputs:
        required = "required" if item.required else "optional"
        print(f"  {item.name} ({required}): {item.description}")
    print("artifacts: " + (", ".join(a.path for a in skill.artifacts) or "none declared"))
    return 0
