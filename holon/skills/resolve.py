"""Which skills a run uses, and which definition of each: command line > repository config >
spec `metadata.skills` > built in (docs/skills.md, "Precedence").

A reference is a built-in name (`github-review`) or a path to a folder holding SKILL.md (it has a
`/` or starts with `.`: `./my-skill`, `.holon/skills/lint`). The run uses the skills the command
line and the spec name; the repository config only defines (adds or overrides) skills, it never
adds one to a run by itself. A name is looked up in the sources in precedence order, so a
repository's `github-review` folder replaces the built-in one, and a folder given on the command
line replaces both. Paths on the command line are relative to the current directory; paths in
the config and the spec are relative to the repository (the workspace) and must stay inside it
through no symlink.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from holon.errors import InvalidInput
from holon.skills.catalog import Skill, SkillCatalog, load_skill, skill_folders
from holon.skills.config import RepoConfig, repo_path


def is_path_ref(ref: str) -> bool:
    return "/" in ref or ref.startswith(".")


class _Source:
    """One precedence level: the skills it defines by name."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.skills: dict[str, Skill] = {}
        self.refs: dict[str, str] = {}  # path reference -> the name its folder declares

    def add(self, skill: Skill, where: str, ref: str | None = None) -> None:
        if ref is not None:
            self.refs[ref] = skill.name
        known = self.skills.get(skill.name)
        if known is not None and known.directory != skill.directory:
            raise InvalidInput(
                f"{where}: two folders define skill {skill.name!r} ({known.directory} and "
                f"{skill.directory})"
            )
        self.skills[skill.name] = skill


def _cli_source(refs: Iterable[str], cwd: Path) -> _Source:
    source = _Source("--skill folders")
    for ref in refs:
        if is_path_ref(ref):
            source.add(load_skill(cwd / ref), "--skill", ref)
    return source


def _config_source(config: RepoConfig | None, repo: Path | None) -> _Source:
    source = _Source("the repository config")
    if config is None or not (config.skills or config.skills_dirs):
        return source
    if repo is None:
        raise InvalidInput("a repository config names skill folders, but there is no repository")
    for ref in config.skills:
        source.add(load_skill(repo_path(repo, ref, "config skills")), "config skills")
    for ref in config.skills_dirs:
        for folder in skill_folders(repo_path(repo, ref, "config skills_dirs")):
            source.add(load_skill(folder), "config skills_dirs")
    return source


def _spec_source(refs: Iterable[str], repo: Path | None) -> _Source:
    source = _Source("the spec's skill folders")
    for ref in refs:
        if not is_path_ref(ref):
            continue
        if repo is None:
            raise InvalidInput(f"spec metadata.skills: {ref} is a path, but there is no repository")
        folder = repo_path(repo, ref, "spec metadata.skills")
        source.add(load_skill(folder), "spec metadata.skills", ref)
    return source


class _Builtin(_Source):
    def __init__(self, catalog: SkillCatalog) -> None:
        super().__init__("built in")
        for name in catalog.names():
            skill = catalog.get(name)
            if skill is not None:
                self.skills[name] = skill


def resolve_skills(
    cli: list[str],
    config: RepoConfig | None,
    spec_skills: list[str],
    builtin: SkillCatalog,
    *,
    cwd: Path | None = None,
    repo: Path | None = None,
) -> list[Skill]:
    """The skills named on the command line, then by the spec, each once (by name), each from
    the highest-precedence source defining it. InvalidInput (one line) for an unknown name, a
    folder that is not a valid skill, or a path leaving the repository."""
    sources = [
        _cli_source(cli, cwd or Path.cwd()),
        _config_source(config, repo),
        _spec_source(spec_skills, repo),
        _Builtin(builtin),
    ]
    used: dict[str, Skill] = {}
    named = [(r, sources[0], "--skill") for r in cli]
    named += [(r, sources[2], "spec metadata.skills") for r in spec_skills]
    for ref, own, where in named:
        name = own.refs.get(ref) or _known_name(ref, sources, where)
        if name in used:
            continue
        used[name] = next(s.skills[name] for s in sources if name in s.skills)
    return list(used.values())


def _known_name(ref: str, sources: list[_Source], where: str) -> str:
    if any(ref in source.skills for source in sources):
        return ref
    searched = ", ".join(source.label for source in sources)
    known = ", ".join(sorted({name for source in sources for name in source.skills}))
    raise InvalidInput(
        f"{where}: unknown skill {ref!r} (searched {searched}; known: {known or 'none'})"
    )
