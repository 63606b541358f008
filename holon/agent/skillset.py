"""The skills a run uses, as the agent finds them: the folders the runner copied to
`<input>/skills/<name>/`, else Holon's built-in catalog, by the names in `spec.metadata.skills`
(with no names, every folder the runner copied)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from holon.contract.spec import Spec
from holon.errors import InvalidInput
from holon.fsutil import read_regular_at
from holon.skills.catalog import Skill, SkillCatalog, SkillRequires, default_catalog, parse_skill

SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"
MAX_SKILL_FILE = 256 * 1024
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,99}")


def _copied(input_dir: Path) -> Path | None:
    root = input_dir / SKILLS_DIR
    try:
        st = root.lstat()
    except OSError:
        return None
    return root if stat.S_ISDIR(st.st_mode) else None


def _read_copied(root: Path, name: str) -> Skill | None:
    """The skill in `<root>/<name>/SKILL.md`, None when there is no such folder."""
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            raw = read_regular_at(dir_fd, f"{name}/{SKILL_FILE}", MAX_SKILL_FILE)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise InvalidInput(f"skill {name}: {SKILL_FILE}: {exc}") from None
    finally:
        os.close(dir_fd)
    source = f"skills/{name}/{SKILL_FILE}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{source}: not UTF-8 text") from None
    skill = parse_skill(text, source)
    if skill.name != name:
        raise InvalidInput(f"{source}: name {skill.name!r} differs from its folder {name!r}")
    return skill.model_copy(update={"directory": root / name})


def resolve_skills(spec: Spec, input_dir: Path, catalog: SkillCatalog | None = None) -> list[Skill]:
    """The run's skills, in the spec's order. InvalidInput names an unknown skill, a SKILL.md
    that does not parse, or a host skill (never an agent's to run)."""
    root = _copied(input_dir)
    names = list(spec.metadata.skills)
    if not names and root is not None:
        names = sorted(e.name for e in os.scandir(root) if e.is_dir(follow_symlinks=False))
    skills: list[Skill] = []
    for name in names:
        if not _NAME.fullmatch(name):
            raise InvalidInput(f"unknown skill {name!r}: not a skill name")
        skill = _read_copied(root, name) if root is not None else None
        if skill is None:
            catalog = catalog if catalog is not None else default_catalog()
            skill = catalog.get(name)
        if skill is None:
            raise InvalidInput(f"unknown skill {name!r}: not in the input's skills/ nor built in")
        if skill.host:
            raise InvalidInput(
                f"skill {name} runs on the host (Holon performs it itself), never in an agent"
            )
        skills.append(skill)
    return skills


def combined_requires(skills: list[Skill]) -> SkillRequires:
    """What success needs when several skills run together: what any of them needs."""
    return SkillRequires(
        change=any(s.requires.change for s in skills),
        verification=any(s.requires.verification for s in skills),
    )
