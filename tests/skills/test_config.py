"""`.holon/config.yaml`: strict, bounded, read through no link; every problem one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holon.errors import InvalidInput
from holon.skills.config import MAX_CONFIG_BYTES, RepoConfig, load_config, repo_config


def _write(repo: Path, text: str) -> Path:
    path = repo / ".holon" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_repository_without_a_config_has_none(tmp_path: Path) -> None:
    assert repo_config(tmp_path) is None


def test_a_config_is_read(tmp_path: Path) -> None:
    _write(tmp_path, "version: v1\nskills: [tools/lint]\nskills_dirs: [.holon/skills]\n")
    assert repo_config(tmp_path) == RepoConfig(skills=["tools/lint"], skills_dirs=[".holon/skills"])
    _write(tmp_path, "# nothing yet\n")
    assert repo_config(tmp_path) == RepoConfig()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("skils: [a]\n", "skils: Extra inputs are not permitted"),
        ("skills: a\n", "skills: Input should be a valid list"),
        ("skills: [/etc]\n", "skills.0: must be a path relative to the repository"),
        ("skills_dirs: [../up]\n", "skills_dirs.0: must be a path relative"),
        ("skills: [a]\nskills: [b]\n", "invalid YAML at line 2, column 1: found duplicate key"),
        ("skills: [a\n", "invalid YAML at line"),
        ("- a\n", "expected a mapping at the top level"),
        ("version: 2\n", "version"),
        ("a: &a [*a]\n", "invalid YAML"),
        ("skills: !!python/object:os.system x\n", "invalid YAML"),
    ],
)
def test_config_errors_are_one_line_naming_the_file(tmp_path: Path, text: str, says: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(InvalidInput) as caught:
        repo_config(tmp_path)
    message = str(caught.value)
    assert message.startswith(str(path))
    assert says in message
    assert "\n" not in message


def test_a_config_past_the_bound_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, "#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(InvalidInput, match="over the"):
        repo_config(tmp_path)


def test_a_config_that_is_not_utf8(tmp_path: Path) -> None:
    path = _write(tmp_path, "")
    path.write_bytes(b"skills: [\xff]\n")
    with pytest.raises(InvalidInput, match="not valid UTF-8"):
        repo_config(tmp_path)


def test_a_linked_config_or_config_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.yaml").write_text("skills: []\n")
    repo = tmp_path / "repo"
    (repo / ".holon").mkdir(parents=True)
    (repo / ".holon" / "config.yaml").symlink_to(elsewhere / "config.yaml")
    with pytest.raises(InvalidInput, match="goes through a symlink"):
        repo_config(repo)
    with pytest.raises(InvalidInput, match="is a symlink"):
        load_config(repo / ".holon" / "config.yaml")
    (repo / ".holon" / "config.yaml").unlink()
    (repo / ".holon").rmdir()
    (repo / ".holon").symlink_to(elsewhere)
    with pytest.raises(InvalidInput, match=r"goes through a symlink \(\.holon\)"):
        repo_config(repo)


def test_a_fifo_config_is_refused_without_blocking(tmp_path: Path) -> None:
    (tmp_path / ".holon").mkdir()
    os.mkfifo(tmp_path / ".holon" / "config.yaml")
    with pytest.raises(InvalidInput, match="not a regular file"):
        repo_config(tmp_path)


def test_a_missing_explicit_config(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
