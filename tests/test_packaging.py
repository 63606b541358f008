"""Holon works from a built wheel in a fresh virtual environment, not only from this checkout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from tests.serve.test_example import EXAMPLE, replayed_intents

REPO = Path(__file__).resolve().parents[1]


def test_listed_packages_are_every_package_of_holon() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {
        ".".join(path.parent.relative_to(REPO).parts)
        for path in (REPO / "holon").rglob("__init__.py")
    }
    data = set(config["package-dir"])
    assert data == {"holon._skills", "holon._schemas"}
    assert set(config["packages"]) == found | data


def _source_copy(target: Path) -> Path:
    """The project's files (tracked, or new and not ignored) copied elsewhere: setuptools builds
    in the source tree, and its `build/` there would both litter the checkout and carry files
    deleted since into the next wheel."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        path = REPO / name.decode()
        if path.is_file() and not path.is_symlink():
            (target / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / name.decode())
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from this checkout's files."""
    root = tmp_path_factory.mktemp("wheel")
    source = _source_copy(root / "source")
    dist = root / "dist"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(dist),
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    (built,) = dist.glob("holon-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bin/` of a new venv holding Holon installed from the wheel."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    install = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    return env_dir / "bin"


@pytest.mark.slow
def test_the_wheel_holds_the_project_files_and_nothing_else(wheel: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "holon", "skills"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    expected = {"holon/_" + n if n.startswith("skills/") else n for n in listed}
    expected |= {f"holon/_schemas/{p.name}" for p in (REPO / "schemas").glob("*.json")}
    with zipfile.ZipFile(wheel) as archive:
        packed = {n for n in archive.namelist() if not n.startswith("holon-")}
    # Skills ship whole; the package ships every module, and nothing stale or foreign rides along.
    assert {n for n in expected if n.startswith("holon/_skills/")} <= packed
    assert {n for n in expected if n.endswith(".py")} <= packed
    assert packed <= expected


def _run(bin_dir: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # Outside the checkout and without its paths, so only the installed package can answer.
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_wheel_has_its_skills_schemas_and_serve_example(installed: Path, tmp_path: Path) -> None:
    version = _run(installed, tmp_path, "holon", "--version")
    assert version.returncode == 0, version.stderr

    skills = _run(installed, tmp_path, "holon", "skills", "list")
    assert skills.returncode == 0, skills.stderr
    for name in ("github-issue-solve", "github-pr-fix", "github-review"):
        assert name in skills.stdout

    # It imports the installed copy, never this checkout.
    where = _run(installed, tmp_path, "python", "-c", "import holon; print(holon.__file__)")
    assert where.stdout.strip().startswith(str(installed.parent)), where.stdout

    check = _run(installed, tmp_path, "python", "-m", "holon.schemas", "--check")
    assert check.returncode == 0, check.stderr

    state = tmp_path / "state"
    serve = _run(
        installed,
        tmp_path,
        "holon",
        "serve",
        "--state-dir",
        str(state),
        "--replay",
        str(EXAMPLE / "replay.ndjson"),
        "--facts",
        str(EXAMPLE / "facts.json"),
        "--dry-run",
        "--once",
    )
    assert serve.returncode == 2, serve.stderr  # issue 1 was stopped: a human is needed
    assert replayed_intents(state) == json.loads((EXAMPLE / "expected.json").read_text())


@pytest.mark.slow
def test_wheel_schemas_check_notices_a_stale_schema(installed: Path, tmp_path: Path) -> None:
    where = _run(installed, tmp_path, "python", "-c", "import holon; print(holon.__file__)")
    schemas = Path(where.stdout.strip()).parent / "_schemas"
    target = schemas / "spec.schema.json"
    original = target.read_bytes()
    try:
        target.write_bytes(original.replace(b'"title"', b'"Title"', 1))
        check = _run(installed, tmp_path, "python", "-m", "holon.schemas", "--check")
        assert check.returncode == 1
        assert "spec.schema.json" in check.stderr
    finally:
        target.write_bytes(original)


@pytest.mark.slow
def test_wheel_ships_the_eval_corpus_and_scores_it(installed: Path, tmp_path: Path) -> None:
    """`holon eval` from the wheel: its scenarios and their event payloads are package data
    (never tests/), every one of them is scored, and the policy decider passes."""
    shipped = len(list((REPO / "holon/eval/scenarios").glob("*.yaml")))
    done = _run(installed, tmp_path, "holon", "eval", "--decider", "policy", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["scenarios"] == shipped >= 24
    assert data["deciders"]["policy"]["passed"] is True
