"""The repository's own Holon configuration: `.holon/config.yaml` (docs/config.md).

    version: v1             # optional
    skills:                 # skill folders this repository adds or overrides, repo-relative
      - .holon/skills/docs-update
    skills_dirs:            # folders whose every <name>/SKILL.md is a skill
      - .holon/skills

It is repository content, so it is data, never authority: read bounded with the strict safe
YAML loader, unknown keys refused, and every path it names must stay inside the repository and
reach its target through no symlink (`repo_path`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from holon import yamlio
from holon.errors import InvalidInput
from holon.validation import describe_validation_error

CONFIG_PATH = ".holon/config.yaml"
MAX_CONFIG_BYTES = 256 * 1024
MAX_ENTRIES = 64


def _repo_relative(value: str) -> str:
    path = PurePosixPath(value)
    if not value or path.is_absolute() or ".." in path.parts or "\\" in value:
        raise ValueError(f"must be a path relative to the repository, inside it, got {value!r}")
    return value


RepoRelative = Annotated[str, AfterValidator(_repo_relative)]


class RepoConfig(BaseModel):
    """`.holon/config.yaml`: what a repository tells Holon about itself."""

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    version: Literal["v1"] = "v1"
    skills: list[RepoRelative] = Field(
        default_factory=list,
        max_length=MAX_ENTRIES,
        description="Skill folders (each holding a SKILL.md), relative to the repository root. "
        "A skill here is used instead of a built-in skill of the same name.",
    )
    skills_dirs: list[RepoRelative] = Field(
        default_factory=list,
        max_length=MAX_ENTRIES,
        description="Folders, relative to the repository root, whose every <name>/SKILL.md is "
        "a skill, as if listed in `skills`.",
    )


def repo_path(repo: Path, relpath: str, what: str) -> Path:
    """`repo/relpath`, refused (InvalidInput) when it leaves the repository or any part of it is
    a symlink: a repository's file never leads Holon elsewhere."""
    try:
        _repo_relative(relpath)
    except ValueError as exc:
        raise InvalidInput(f"{what}: {exc}") from None
    current = repo
    walked = PurePosixPath()
    for part in PurePosixPath(relpath).parts:
        current = current / part
        walked = walked / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            raise InvalidInput(f"{what}: {relpath} does not exist in the repository") from None
        except OSError as exc:
            raise InvalidInput(f"{what}: cannot read {relpath}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode):
            raise InvalidInput(
                f"{what}: {relpath} goes through a symlink ({walked}); Holon follows none here"
            )
    return current


def parse_config(text: str, source: str) -> RepoConfig:
    try:
        data = yamlio.load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise InvalidInput(f"{source}: invalid YAML{where}: {problem}") from None
    except RecursionError:
        raise InvalidInput(f"{source}: invalid YAML: nested too deeply") from None
    if data is None:
        return RepoConfig()
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: expected a mapping at the top level")
    try:
        return RepoConfig.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(source, exc)) from None


def load_config(path: Path) -> RepoConfig:
    """The config file at `path`: a regular file reached without a final symlink, at most
    MAX_CONFIG_BYTES, UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InvalidInput(f"config file not found: {path}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidInput(f"{path} is a symlink; Holon reads no config through one") from None
        raise InvalidInput(f"cannot read config {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InvalidInput(f"config {path} is not a regular file")
        raw = handle.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise InvalidInput(f"config {path}: over the {MAX_CONFIG_BYTES} bytes limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"config {path}: not valid UTF-8 (byte {exc.start})") from None
    return parse_config(text, str(path))


def repo_config(repo: Path) -> RepoConfig | None:
    """The repository's `.holon/config.yaml` when it has one; a link on the way is refused."""
    if not os.path.lexists(repo / CONFIG_PATH):
        return None
    return load_config(repo_path(repo, CONFIG_PATH, "repository config"))
