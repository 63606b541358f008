"""`holon skills list|show NAME`: the skill catalog the controller dispatches from."""

from __future__ import annotations

import argparse
import json


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="every skill with its description")
    listing.add_argument("--json", action="store_true")
    show = sub.add_parser(
        "show", help="one skill's inputs, artifacts, requirements and permissions"
    )
    show.add_argument("name")
    show.add_argument("--json", action="store_true")


def main(args: argparse.Namespace) -> int:
    from holon.errors import InvalidInput
    from holon.skills.catalog import default_catalog

    catalog = default_catalog()
    if args.action == "list":
        skills = [catalog.get(name) for name in sorted(catalog.names())]
        if args.json:
            print(json.dumps([s.model_dump(by_alias=True) for s in skills if s], indent=2))
        else:
            for skill in skills:
                if skill is not None:
                    print(f"{skill.name:<22} {skill.runs:<6} {skill.description}")
        return 0
    skill = catalog.get(args.name)
    if skill is None:
        known = ", ".join(sorted(catalog.names()))
        raise InvalidInput(f"unknown skill {args.name!r}: known skills are {known}")
    if args.json:
        print(skill.model_dump_json(indent=2, by_alias=True))
        return 0
    print(f"{skill.name}: {skill.description}")
    print(f"runs: {skill.runs}")
    print("inputs:" + ("" if skill.inputs else " none"))
    for item in skill.inputs:
        required = "required" if item.required else "optional"
        print(f"  {item.name} ({required}): {item.description}")
    print("artifacts:" + ("" if skill.artifacts else " none declared"))
    for artifact in skill.artifacts:
        required = "required" if artifact.required else "optional"
        schema = f", schema {artifact.schema_}" if artifact.schema_ else ""
        print(f"  {artifact.path} ({required}{schema}): {artifact.description}")
    wants = [name for name, on in skill.requires.model_dump().items() if on]
    print("requires: " + (", ".join(wants) or "nothing beyond the artifacts"))
    granted = [f"{name}: {level}" for name, level in sorted(skill.permissions.items())]
    print("permissions: " + (", ".join(granted) or "none (no GitHub token)"))
    if skill.directory is not None:
        print(f"folder: {skill.directory}")
    return 0
