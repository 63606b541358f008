from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.cli.main import main
from holon.errors import InvalidInput
from holon.skills.catalog import DirectoryCatalog, default_catalog, parse_skill


def test_repository_skills_are_valid() -> None:
    catalog = default_catalog()
    assert {"github-issue-solve", "github-pr-fix", "github-review"} <= catalog.names()
    solve = catalog.get("github-issue-solve")
    assert solve is not None
    assert [i.name for i in solve.inputs if i.required] == ["issue"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no frontmatter\n", "must start with a --- frontmatter block"),
        ("---\nname: x\n", "unterminated frontmatter"),
        ("---\nname: [\n---\n", "not valid YAML"),
        ("---\nname: Bad Name\ndescription: d\n---\n", "name"),
        ("---\nname: ok\n---\n", "description: Field required"),
    ],
)
def test_bad_skill_files(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_skill(text, "SKILL.md")


def test_directory_name_must_match(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "SKILL.md").write_text("---\nname: two\ndescription: d\n---\n")
    with pytest.raises(InvalidInput, match="differs from its directory"):
        DirectoryCatalog(tmp_path)


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skills", "list"]) == 0
    assert "github-review" in capsys.readouterr().out
    assert main(["skills", "show", "github-pr-fix", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "github-pr-fix"
    assert main(["skills", "show", "nope"]) == 64
    assert "unknown skill 'nope'" in capsys.readouterr().err
