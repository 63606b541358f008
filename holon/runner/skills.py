"""The skills a run uses, read once before the agent starts: the folders the agent receives at
`<input>/skills/<name>/` and the artifact schemas the runner checks its outputs against.

Each folder is read as `skills.folder.read_folder` reads it (regular files only, no link, bounded)
and its schemas are parsed and checked as JSON Schemas here, so a broken skill is invalid input
before anything runs, and what the agent sees and what the runner enforces are the same bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holon import jsonio
from holon.errors import InvalidInput
from holon.skills.catalog import Skill, skill_of
from holon.skills.folder import SkillFiles, read_folder

MAX_SCHEMA_DEPTH = 64


@dataclass(frozen=True)
class SkillBundle:
    skill: Skill
    files: SkillFiles | None  # None: a skill known only by its declaration (no folder)
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)  # artifact path -> schema


def bundle(skill: Skill) -> SkillBundle:
    """`skill`'s folder and parsed schemas; InvalidInput for a host skill (Holon performs those
    itself, never an agent), a folder that changed into an invalid skill, or a bad schema."""
    if skill.host:
        raise InvalidInput(
            f"skill {skill.name} runs on the host (Holon performs it itself); an agent run "
            "cannot use it"
        )
    if skill.directory is None:
        if any(a.schema_ for a in skill.artifacts):
            raise InvalidInput(f"skill {skill.name}: its artifact schemas have no folder")
        return SkillBundle(skill, None)
    files = read_folder(skill.directory)
    # Read again: the declaration the run enforces is the one in the bytes copied to the agent.
    skill = skill_of(files)
    schemas = {}
    for artifact in skill.artifacts:
        if artifact.schema_ is not None:
            schemas[artifact.path] = _schema(files, artifact.schema_, skill.name)
    return SkillBundle(skill, files, schemas)


def _schema(files: SkillFiles, relpath: str, skill: str) -> dict[str, Any]:
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    source = f"skill {skill}: {relpath}"
    data = jsonio.loads(files.files[relpath], source, max_depth=MAX_SCHEMA_DEPTH)
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: a JSON Schema must be an object")
    try:
        validator_for(data).check_schema(data)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
        raise InvalidInput(f"{source}: not a valid JSON Schema at {where}: {exc.message}") from None
    return data


def write_bundles(skills_dir: Path, bundles: list[SkillBundle]) -> None:
    """`<skills_dir>/<name>/...` for every bundle with a folder; new files only (O_EXCL)."""
    made = False
    for item in bundles:
        if item.files is None:
            continue
        if not made:
            skills_dir.mkdir()
            made = True
        top = skills_dir / item.skill.name
        top.mkdir()
        for directory in item.files.directories:
            (top / directory).mkdir()
        for relpath, data in item.files.files.items():
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(top / relpath, flags, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
