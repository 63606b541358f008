"""The skill catalog: names and declared inputs of skills, read from `skills/*/SKILL.md`
(shipped inside the package when installed: `holon.packaged`).

`SkillCatalog` is the narrow interface the controller needs; `DirectoryCatalog` reads the
frontmatter of each SKILL.md, `StaticCatalog` is the in-memory implementation tests use.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from holon.errors import InvalidInput
from holon.validation import describe_validation_error


class SkillInput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    required: bool = False


def _artifact(value: Any) -> Any:
    # A bare path declares an artifact without a schema, not required (the legacy list form).
    return {"path": value} if isinstance(value, str) else value


class SkillArtifact(BaseModel):
    """An artifact the skill's run writes under the output directory, checked by the runner."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    path: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
    description: str = ""
    required: bool = False
    # A JSON Schema file relative to the skill's folder; the runner validates the artifact with it.
    schema_: str | None = Field(default=None, alias="schema")


class SkillRequires(BaseModel):
    """What success needs beyond the model saying so; the agent checks it before reporting
    success and reports failure (or the model's question) instead."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    change: bool = False  # a non-empty change in the workspace
    verification: bool = False  # at least one recorded command the model cites, that passed


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str
    inputs: list[SkillInput] = Field(default_factory=list)
    artifacts: list[
        Annotated[
            SkillArtifact, BeforeValidator(_artifact, json_schema_input_type=str | SkillArtifact)
        ]
    ] = Field(default_factory=list)
    # `agent`: in an agent's container under the Agent Contract; `host`: performed by Holon
    # itself in its trusted process (context collection, publishing), never sent to an agent.
    runs: Literal["agent", "host"] = "agent"
    # GitHub token permissions the skill needs (`contents: write`, ...); documentation and the
    # Action's preflight read them.
    permissions: dict[str, Literal["read", "write"]] = Field(default_factory=dict)
    requires: SkillRequires = Field(default_factory=SkillRequires)
    # The folder the SKILL.md was read from (its prompt templates and schemas); not declared.
    directory: Path | None = Field(default=None, exclude=True)

    @property
    def host(self) -> bool:
        return self.runs == "host"


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
            skills.append(skill.model_copy(update={"directory": path.parent}))
        super().__init__(skills)


def default_catalog() -> DirectoryCatalog:
    from holon.packaged import data_dir

    return DirectoryCatalog(data_dir("skills"))
