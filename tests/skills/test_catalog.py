from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.cli.main import main
from holon.errors import InvalidInput
from holon.skills.catalog import DirectoryCatalog, default_catalog, parse_skill


def test_repository_skills_are_valid() -> None:
    catalog = default_catalog()
    assert {
        "github-context",
        "github-issue-solve",
        "github-pr-fix",
        "github-publish",
        "github-review",
    } == catalog.names()
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


def test_cli_shows_where_a_skill_runs_what_it_writes_requires_and_needs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["skills", "list"]) == 0
    listed = capsys.readouterr().out
    assert "github-context         host" in listed
    assert "github-review          agent" in listed
    assert main(["skills", "show", "github-review"]) == 0
    shown = capsys.readouterr().out
    assert "runs: agent" in shown
    assert "review.json (required, schema schemas/review.schema.json)" in shown
    assert "review.md (required)" in shown
    assert main(["skills", "show", "github-issue-solve"]) == 0
    assert "requires: change, verification" in capsys.readouterr().out
    assert main(["skills", "show", "github-publish"]) == 0
    assert "contents: write" in capsys.readouterr().out
    assert main(["skills", "show", "github-pr-fix", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["artifacts"][0] == {
        "path": "pr-fix.json",
        "description": data["artifacts"][0]["description"],
        "required": True,
        "schema": "schemas/pr-fix.schema.json",
    }
    assert data["requires"] == {"change": False, "verification": True}
