"""Skill folders read without following links, bounded; frontmatter errors name file and field."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holon.errors import InvalidInput
from holon.skills import folder as folder_module
from holon.skills.catalog import DirectoryCatalog, load_skill
from holon.skills.folder import read_folder
from tests.skills.conftest import write_skill


def test_a_folder_is_read_whole(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path / "lint", extra="artifacts:\n  - path: out.json\n    schema: s/o.json\n"
    )
    (skill / "s").mkdir()
    (skill / "s" / "o.json").write_text("{}")
    files = read_folder(skill)
    assert set(files.files) == {"SKILL.md", "s/o.json"}
    assert files.directories == ("s",)
    loaded = load_skill(skill)
    assert loaded.directory == skill
    assert loaded.artifacts[0].schema_ == "s/o.json"


@pytest.mark.parametrize("where", ["top", "nested", "skill_md"])
def test_a_symlink_anywhere_in_a_skill_folder_is_refused(tmp_path: Path, where: str) -> None:
    skill = write_skill(tmp_path / "lint")
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    if where == "top":
        (skill / "notes.md").symlink_to(secret)
    elif where == "nested":
        (skill / "deep").mkdir()
        (skill / "deep" / "x").symlink_to(tmp_path)
    else:
        (skill / "SKILL.md").unlink()
        (skill / "SKILL.md").symlink_to(secret)
    with pytest.raises(InvalidInput, match="is a symlink; a skill folder holds no link"):
        load_skill(skill)


def test_a_fifo_in_a_skill_folder_is_refused_without_blocking(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "lint")
    os.mkfifo(skill / "pipe")
    with pytest.raises(InvalidInput, match="not a regular file or directory"):
        load_skill(skill)


def test_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = write_skill(tmp_path / "lint")
    monkeypatch.setattr(folder_module, "MAX_FILES", 3)
    for n in range(3):
        (skill / f"f{n}").write_text("x")
    with pytest.raises(InvalidInput, match="more than 3 files"):
        read_folder(skill)
    monkeypatch.setattr(folder_module, "MAX_FILES", 100)
    monkeypatch.setattr(folder_module, "MAX_BYTES", 100)
    (skill / "big").write_bytes(b"x" * 200)
    with pytest.raises(InvalidInput, match="larger than 100 bytes"):
        read_folder(skill)


def test_a_symlinked_skill_in_a_skills_directory_is_refused(tmp_path: Path) -> None:
    write_skill(tmp_path / "elsewhere" / "lint")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "lint").symlink_to(tmp_path / "elsewhere" / "lint")
    with pytest.raises(InvalidInput, match="is a symlink"):
        DirectoryCatalog(tmp_path / "dir")


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ("runs: cloud\n", "SKILL.md: runs: Input should be 'agent' or 'host'"),
        ("artifacts:\n  - path: ../x\n", "SKILL.md: artifacts.0.path"),
        ("artifacts:\n  - path: a\n    schema: /etc/passwd\n", "artifacts.0.schema"),
        (
            "artifacts:\n  - path: a\n    schema: s.json\n",
            "artifacts.0.schema: s.json is not a file",
        ),
        ("permissions: {contents: admin}\n", "permissions.contents"),
        ("requires: {tests: true}\n", "requires.tests"),
        ("inputs: [{name: a, bogus: 1}]\n", "inputs.0.bogus"),
    ],
)
def test_invalid_frontmatter_names_the_file_and_the_field(
    tmp_path: Path, extra: str, says: str
) -> None:
    skill = write_skill(tmp_path / "lint", extra=extra)
    with pytest.raises(InvalidInput) as caught:
        load_skill(skill)
    message = str(caught.value)
    assert message.startswith(str(skill / "SKILL.md"))
    assert says in message
    assert "\n" not in message


def test_duplicate_frontmatter_keys_are_refused(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "lint", extra="description: again\n")
    with pytest.raises(InvalidInput, match="not valid YAML at line"):
        load_skill(skill)


def test_frontmatter_that_is_not_a_mapping(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "SKILL.md").write_text("---\n- a\n---\n")
    with pytest.raises(InvalidInput, match="must be a mapping"):
        load_skill(tmp_path / "x")
