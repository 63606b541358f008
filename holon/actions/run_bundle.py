"""A deferred skill run, packed for a run job: `<bundle dir>/<run>/` holds everything `holon run
--bundle` needs and nothing secret.

    bundle.json         RunBundle: the run's name, intent, attempt, subject, skill, the spec
                        (built as the runner's own handler builds it), the user prompt, the
                        commit the decide job saw
    context/            the run's GitHub context, collected by the decide job
    skills/<skill>/     the skill's folder (its declaration and artifact schemas)

Model keys never enter a bundle: the run job gets them as secrets of its own, named by
`--secret-env`. A bundle is made by the trusted decide job; the run job still reads it without
following links, bounded, and schema-checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from holon import jsonio
from holon.actions.matrix import COMMIT_PATTERN
from holon.contract.spec import Spec
from holon.errors import InvalidInput
from holon.fsutil import atomic_write_text, open_regular, remove_tree
from holon.skills.catalog import Skill, load_skill
from holon.validation import describe_validation_error

BUNDLE_FILE = "bundle.json"
CONTEXT_DIR = "context"
SKILLS_DIR = "skills"
MAX_BUNDLE_BYTES = 2 * 1024 * 1024
# A run's name is `<intent>-<attempt>`: a path component and an artifact name, nothing more.
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def valid_run_name(name: str) -> bool:
    return bool(RUN_NAME.fullmatch(name)) and ".." not in name


class RunBundle(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    run: str = Field(pattern=RUN_NAME.pattern, description="<intent>-<attempt>: the run's id.")
    intent: str
    attempt: int = Field(ge=1)
    subject: str
    skill: str
    spec: Spec
    user_prompt: str | None = None
    base_sha: str | None = Field(
        default=None,
        pattern=COMMIT_PATTERN,
        description="The commit the run starts from, which its job checks out: the pull "
        "request's head for a run on one, else the decide job's checkout (GITHUB_SHA).",
    )


@dataclass(frozen=True)
class LoadedBundle:
    bundle: RunBundle
    context: Path | None
    skills: list[Skill]


def write_bundle(root: Path, bundle: RunBundle, skill: Skill | None) -> Path:
    """`<root>/<run>/` with bundle.json and the skill folder (a stale one replaced); the caller
    fills `context/` (`context_dir`) before or after."""
    if not valid_run_name(bundle.run):
        raise InvalidInput(f"run name {bundle.run[:80]!r} is not a plain name")
    directory = root / bundle.run
    if directory.is_dir() and not directory.is_symlink():
        remove_tree(directory)  # a run deferred again (recovery) is bundled anew
    elif directory.exists() or directory.is_symlink():
        directory.unlink()
    directory.mkdir(parents=True)
    if skill is not None and skill.directory is not None:
        from holon.runner.skills import bundle as skill_bundle
        from holon.runner.skills import write_bundles

        write_bundles(directory / SKILLS_DIR, [skill_bundle(skill)])
    atomic_write_text(directory / BUNDLE_FILE, bundle.model_dump_json(indent=2) + "\n")
    return directory


def context_dir(directory: Path) -> Path:
    return directory / CONTEXT_DIR


def read_bundle(directory: Path) -> LoadedBundle:
    """The bundle at `directory`; InvalidInput (one line) when it is not one."""
    path = directory / BUNDLE_FILE
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        raise InvalidInput(f"--bundle {directory}: no {BUNDLE_FILE} (not a run bundle)") from None
    except OSError as exc:
        raise InvalidInput(f"--bundle {directory}: {exc.strerror or exc}") from None
    with open(fd, "rb") as handle:
        raw = handle.read(MAX_BUNDLE_BYTES + 1)
    if len(raw) > MAX_BUNDLE_BYTES:
        raise InvalidInput(f"{path}: larger than {MAX_BUNDLE_BYTES} bytes")
    try:
        bundle = RunBundle.model_validate(jsonio.load_object(raw, str(path)))
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(str(path), exc)) from None
    context = directory / CONTEXT_DIR
    if context.is_symlink() or (context.exists() and not context.is_dir()):
        raise InvalidInput(f"{context}: not a plain directory")
    skills: list[Skill] = []
    folder = directory / SKILLS_DIR / bundle.skill
    if folder.is_symlink():
        raise InvalidInput(f"{folder}: a link; a bundle's skill folder is a plain directory")
    if folder.is_dir():
        found = load_skill(folder)
        if found.name != bundle.skill:
            raise InvalidInput(f"{folder}: declares skill {found.name}, not {bundle.skill}")
        skills.append(found)
    return LoadedBundle(bundle, context if context.is_dir() else None, skills)


__all__ = [
    "BUNDLE_FILE",
    "LoadedBundle",
    "RunBundle",
    "context_dir",
    "read_bundle",
    "valid_run_name",
    "write_bundle",
]
