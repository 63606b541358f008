"""Where the data that ships with Holon lives: `skills/` and `schemas/`.

An installed Holon (a wheel) carries them inside the package as `holon/_skills` and
`holon/_schemas` (pyproject.toml maps the top-level directories there); a source checkout,
editable or not, reads them from the top level of the repository.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

from holon.errors import OperationalError


def data_dir(name: Literal["skills", "schemas"]) -> Path:
    packaged = files("holon").joinpath(f"_{name}")
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise OperationalError(
        f"this Holon installation has no {name}/ (looked in {packaged}, {checkout})"
    )
