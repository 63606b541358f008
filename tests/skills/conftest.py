from __future__ import annotations

from pathlib import Path


def write_skill(
    folder: Path, name: str | None = None, extra: str = "", description: str = "d"
) -> Path:
    """A minimal valid skill folder at `folder` (its name the folder's unless `name`)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name or folder.name}\ndescription: {description}\n{extra}---\n# body\n"
    )
    return folder
