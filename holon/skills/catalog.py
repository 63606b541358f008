"""The skill catalog: what each skill declares, read from `skills/*/SKILL.md` (shipped inside
the package when installed: `holon.packaged`).

`SkillCatalog` is the narrow interface the controller needs; `DirectoryCatalog` reads every
skill folder of a directory, `load_skill` one folder (read as `folder.read_folder` reads it: no
link, bounded), `StaticCatalog` is the in-memory implementation tests use. Which definition of
a name a run uses (command line, repository config, spec, built in) is `resolve.py`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, Protocol

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from holon import yamlio
from holon.errors import InvalidInput
from holon.skills.folder import SkillFiles, read_folder
from holon.validation import describe_validation_error, empty_dict, empty_list

SKILL_FILE = "SKILL.md"
PROMPT_FILE = "prompt.md.j2"
MAX_SKILL_MD = 64 * 1024


def _inside(value: str, what: str) -> str:
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or not value:
        raise ValueError(f"{what} must be a relative path inside the folder, got {value!r}")
    return value


class SkillInput(BaseModel):
    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    description: str = ""
    required: bool = False


def _artifact(value: Any) -> Any:
    # A bare path declares an artifact without a schema, not required (the legacy list form).
    return {"path": value} if isinstance(value, str) else value


class SkillArtifact(BaseModel):
    """An artifact the skill's run writes under the output directory, checked by the runner."""

    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    path: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
    description: str = ""
    required: bool = False
    # A JSON Schema file relative to the skill's folder; the runner validates the artifact with it.
    schema_: str | None = Field(default=None, alias="schema")

    @field_validator("path")
    @classmethod
    def _path_inside(cls, value: str) -> str:
        return _inside(value, "an artifact path (in the output directory)")

    @field_validator("schema_")
    @classmethod
    def _schema_inside(cls, value: str | None) -> str | None:
        return None if value is None else _inside(value, "a schema path (in the skill folder)")


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
    inputs: list[SkillInput] = Field(default_factory=empty_list)
    artifacts: list[
        Annotated[
            SkillArtifact, BeforeValidator(_artifact, json_schema_input_type=str | SkillArtifact)
        ]
    ] = Field(default_factory=empty_list)
    # `agent`: in an agent's container under the Agent Contract; `host`: performed by Holon
    # itself in its trusted process (context collection, publishing), never sent to an agent.
    runs: Literal["agent", "host"] = "agent"
    # GitHub token permissions the skill needs (`contents: write`, ...); documentation and the
    # Action's preflight read them.
    permissions: dict[str, Literal["read", "write"]] = Field(default_factory=empty_dict)
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
    """SKILL.md's frontmatter as a Skill; InvalidInput naming the file and the field."""
    if not text.startswith("---\n"):
        raise InvalidInput(f"{source}: SKILL.md must start with a --- frontmatter block")
    end = text.find("\n---", 4)
    if end < 0:
        raise InvalidInput(f"{source}: unterminated frontmatter")
    try:
        data = yamlio.load(text[4:end])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise InvalidInput(f"{source}: frontmatter is not valid YAML{where}") from None
    except RecursionError:
        raise InvalidInput(f"{source}: frontmatter is not valid YAML (nested too deeply)") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: the frontmatter must be a mapping")
    try:
        return Skill.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(source, exc)) from None


def skill_of(files: SkillFiles) -> Skill:
    """The skill a folder read by `read_folder` declares, checked against the folder: its name
    is the folder's, and every schema it names is a file in it."""
    folder = files.root
    source = str(folder / SKILL_FILE)
    raw = files.files.get(SKILL_FILE)
    if raw is None:
        raise InvalidInput(f"{folder}: no {SKILL_FILE} in the skill folder")
    if len(raw) > MAX_SKILL_MD:
        raise InvalidInput(f"{source}: larger than {MAX_SKILL_MD} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{source}: not valid UTF-8 (byte {exc.start})") from None
    skill = parse_skill(text, source)
    if skill.name != folder.name:
        raise InvalidInput(f"{source}: name {skill.name!r} differs from its directory")
    for index, artifact in enumerate(skill.artifacts):
        if artifact.schema_ is not None and artifact.schema_ not in files.files:
            raise InvalidInput(
                f"{source}: artifacts.{index}.schema: {artifact.schema_} is not a file "
                "of the skill folder"
            )
    return skill.model_copy(update={"directory": folder})


def load_skill(folder: Path) -> Skill:
    """The skill in `folder` (a directory holding SKILL.md); InvalidInput naming the problem."""
    return skill_of(read_folder(folder))


class DirectoryCatalog(StaticCatalog):
    """Every `<root>/<name>/SKILL.md`; the directory name must equal the declared name."""

    def __init__(self, root: Path) -> None:
        super().__init__(load_skill(folder) for folder in skill_folders(root))


def skill_folders(root: Path) -> list[Path]:
    """The folders of `root` holding a SKILL.md, sorted; a link among them is refused, not
    followed (`root` may be a repository's folder)."""
    try:
        entries = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError as exc:
        raise InvalidInput(f"cannot read skills directory {root}: {exc.strerror or exc}") from None
    found = []
    for entry in entries:
        if entry.is_symlink():
            raise InvalidInput(f"{root / entry.name} is a symlink; a skills directory holds none")
        if entry.is_dir(follow_symlinks=False) and os.path.lexists(
            os.path.join(entry.path, SKILL_FILE)
        ):
            found.append(Path(entry.path))
    return found


@cache
def default_catalog() -> DirectoryCatalog:
    """The built-in skills, read once per process: every folder is read whole, and the shipped
    folders do not change while Holon runs."""
    from holon.packaged import data_dir

    return DirectoryCatalog(data_dir("skills"))
