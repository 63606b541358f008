"""The skill catalog: names and declared inputs of skills, read from `skills/*/SKILL.md`
(shipped inside the package when installed: `holon.packaged`).

`SkillCatalog` is the narrow interface the controller needs; `DirectoryCatalog` reads the
frontmatter of each SKILL.md, `StaticCatalog` is the in-memory implementation tests use.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from holon.errors import InvalidInput
from holon.validation import describe_validation_error


class SkillInput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    required: bool = False


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str
    inputs: list[SkillInput] = Field(default_factory=list)
    artifacts: list[str] = Field(default_factory=list)
    # Performed by Holon itself on the host (publishing), never sent to an agent's container.
    host: bool = False


class SkillCatalog(Protocol):
    def names(self) -> frozenset[str]: ...

    def get(self, name: str) -> Skill | None: ...


def host_skills(catalog: SkillCatalog) -> frozenset[str]:
    """The skills Holon performs itself; the executor never hands them to the runner."""
    found = (catalog.get(name) for name in catalog.names())
    return frozenset(s.name for s in found if s is not None and s.host)


class StaticCatalog:
    def __init__(self, skills: Iterable[Skill]) -> None:
        self._skills = {skill.name: skill for skill in skills}

    def names(self) -> frozenset[str]:
        return frozenset(self._skills)

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name)


def parse_skill(text: str, source: str) -> Skill:
    if not text.startswith("---\n"):
        raise InvalidInput(f"{source}: SKILL.md must start with a --- frontmatter block")
    end = text.find("\n---", 4)
    if end < 0:
        raise InvalidInput(f"{source}: unterminated frontmatter")
    try:
        data = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        raise InvalidInput(f"{source}: frontmatter is not valid YAML") from None
    try:
        return Skill.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(source, exc)) from None


class DirectoryCatalog(StaticCatalog):
    """Every `<root>/<name>/SKILL.md`; the directory name must equal the declared name."""

    def __init__(self, root: Path) -> None:
        skills = []
        for path in sorted(root.glob("*/SKILL.md")):
            skill = parse_skill(path.read_text(encoding="utf-8"), str(path))
            if skill.name != path.parent.name:
                raise InvalidInput(f"{path}: name {skill.name!r} differs from its directory")
            skills.append(skill)
        super().__init__(skills)


def default_catalog() -> DirectoryCatalog:
    from holon.packaged import data_dir

    return DirectoryCatalog(data_dir("skills"))
