"""Which definition of a skill a run uses: --skill > repository config > spec > built in."""

from __future__ import annotations

from pathlib import Path

import pytest

from holon.errors import InvalidInput
from holon.skills.catalog import StaticCatalog, default_catalog
from holon.skills.config import RepoConfig
from holon.skills.resolve import resolve_skills
from tests.skills.conftest import write_skill


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """`github-review` defined in every source, each with its own description."""
    repo = tmp_path / "repo"
    cli = tmp_path / "mine"
    write_skill(cli / "github-review", description="from the command line")
    write_skill(repo / ".holon" / "skills" / "github-review", description="from the config")
    write_skill(repo / "spec-skills" / "github-review", description="from the spec")
    return {"repo": repo, "cli": cli}


CONFIG = RepoConfig(skills_dirs=[".holon/skills"])
CLI_REF = "./mine/github-review"
SPEC_REF = "spec-skills/github-review"


@pytest.mark.parametrize(
    ("cli", "config", "spec", "wins"),
    [
        ([CLI_REF], CONFIG, [SPEC_REF], "from the command line"),
        ([CLI_REF], None, [SPEC_REF], "from the command line"),
        (["github-review"], CONFIG, [SPEC_REF], "from the config"),
        ([], CONFIG, [SPEC_REF], "from the config"),
        ([], CONFIG, ["github-review"], "from the config"),
        ([], None, [SPEC_REF], "from the spec"),
        (["github-review"], None, [SPEC_REF], "from the spec"),
        ([], None, ["github-review"], "Review a pull request's new changes"),  # built in
        (["github-review"], None, [], "Review a pull request's new changes"),
    ],
)
def test_the_higher_source_wins(
    places: dict[str, Path],
    tmp_path: Path,
    cli: list[str],
    config: RepoConfig | None,
    spec: list[str],
    wins: str,
) -> None:
    skills = resolve_skills(cli, config, spec, default_catalog(), cwd=tmp_path, repo=places["repo"])
    assert [s.name for s in skills] == ["github-review"]
    assert skills[0].description.startswith(wins)


def test_the_run_uses_what_the_cli_and_spec_name_each_once(
    places: dict[str, Path], tmp_path: Path
) -> None:
    write_skill(places["repo"] / ".holon" / "skills" / "docs-update")
    skills = resolve_skills(
        ["github-pr-fix"],
        CONFIG,
        ["docs-update", "github-pr-fix"],
        default_catalog(),
        cwd=tmp_path,
        repo=places["repo"],
    )
    # The config defines docs-update and github-review but adds neither to the run by itself.
    assert [s.name for s in skills] == ["github-pr-fix", "docs-update"]
    assert resolve_skills([], CONFIG, [], default_catalog(), repo=places["repo"]) == []


def test_an_unknown_skill_names_the_sources_searched(places: dict[str, Path]) -> None:
    with pytest.raises(InvalidInput) as caught:
        resolve_skills([], CONFIG, ["github-reveiw"], default_catalog(), repo=places["repo"])
    message = str(caught.value)
    assert message.startswith("spec metadata.skills: unknown skill 'github-reveiw'")
    for source in ("--skill folders", "the repository config", "the spec's", "built in"):
        assert source in message
    assert "github-review" in message  # what is known
    assert "\n" not in message


@pytest.mark.parametrize(
    ("config", "spec", "says"),
    [
        (
            RepoConfig.model_construct(skills=["../outside"], skills_dirs=[]),
            [],
            "config skills: must be a path relative",
        ),
        (RepoConfig(skills=["nothing-here"]), [], "nothing-here does not exist in the repository"),
        (RepoConfig(skills_dirs=["linked"]), [], "linked goes through a symlink"),
        (RepoConfig(skills=["linked/github-review"]), [], "goes through a symlink"),
        (None, ["../outside/x"], "spec metadata.skills: must be a path relative"),
        (None, ["linked/github-review"], "goes through a symlink"),
    ],
)
def test_repository_paths_stay_inside_and_follow_no_link(
    places: dict[str, Path],
    tmp_path: Path,
    config: RepoConfig | None,
    spec: list[str],
    says: str,
) -> None:
    write_skill(tmp_path / "outside" / "x")
    (places["repo"] / "linked").symlink_to(places["repo"] / ".holon" / "skills")
    with pytest.raises(InvalidInput, match=says):
        resolve_skills(
            [], config, spec or ["github-review"], default_catalog(), repo=places["repo"]
        )


def test_config_paths_are_checked_even_when_given_as_a_model() -> None:
    with pytest.raises(ValueError, match="inside it"):
        RepoConfig(skills=["/etc"])


def test_two_folders_of_one_source_defining_a_name_is_an_error(
    places: dict[str, Path], tmp_path: Path
) -> None:
    config = RepoConfig(skills=["spec-skills/github-review"], skills_dirs=[".holon/skills"])
    with pytest.raises(InvalidInput, match="two folders define skill 'github-review'"):
        resolve_skills([], config, ["github-review"], default_catalog(), repo=places["repo"])


def test_a_cli_folder_with_a_bad_skill_names_its_file(tmp_path: Path) -> None:
    write_skill(tmp_path / "bad", extra="runs: sometimes\n")
    with pytest.raises(InvalidInput, match=r"bad/SKILL\.md: runs"):
        resolve_skills(["./bad"], None, [], StaticCatalog([]), cwd=tmp_path)


def test_a_path_without_a_repository_is_refused() -> None:
    with pytest.raises(InvalidInput, match="there is no repository"):
        resolve_skills([], None, ["./x"], StaticCatalog([]))
