"""Hostile corpus: the shape of the tree an agent leaves behind (depth, path length, special files).

Each case is an agent that once crashed Holon's own steps (exit 70, no run.json, the run root left
in the temp dir), made them treat the same file differently by where it sat, or let git drop work
without a word. The safe outcome asserted: a run record always, the agent's work carried or the run
failed saying why, and nothing of the run left behind.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from holon.fsutil import remove_tree
from holon.runner import RunRequest, RunResult, run
from holon.runner.tree import PATH_MAX
from tests.conftest import AGENT_SCRIPT, spec_for

MANIFEST_OK = (
    'printf \'{"status":"completed","outcome":"success"}\' > "$HOLON_OUTPUT_DIR/manifest.json"'
)
DEPTH = 1800  # past Python's recursion limit (1000), within git's path limit: "a/" * 1800


def _python(code: str) -> str:
    """A shell step running `code` with this interpreter (the local agent is a shell script)."""
    return f"{sys.executable} -c {shlex.quote(code)}"


def _deep(where: str, depth: int, name: str) -> str:
    """Python making `depth` nested directories called `name` under `where` (an environment
    variable), each opened from the last: neither the shell's nor the kernel's path limit stops
    it. A `leaf.txt` is written at the bottom."""
    return _python(
        "import os\n"
        f"fd = os.open(os.environ[{where!r}], os.O_RDONLY)\n"
        f"for _ in range({depth}):\n"
        f"    os.mkdir({name!r}, dir_fd=fd)\n"
        f"    step = os.open({name!r}, os.O_RDONLY, dir_fd=fd)\n"
        "    os.close(fd)\n"
        "    fd = step\n"
        "out = os.open('leaf.txt', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)\n"
        "os.write(out, b'deep work\\n')\n"
        "print('made', flush=True)\n"
    )


def _made(result: RunResult) -> None:
    """The agent's Python step ran to its end (the tree is really there)."""
    assert "made" in (Path(result.output_path) / "run.log").read_text()


@pytest.fixture
def temp_dir() -> Path:
    """The test's own temp dir (conftest): a run root left there fails the test."""
    return Path(tempfile.gettempdir())


@pytest.fixture
def agent(make_repo: Callable[..., Path], tmp_path: Path) -> Callable[..., RunResult]:
    repo = make_repo(dirty=False)

    def go(script: str, **kw: Any) -> RunResult:
        request = RunRequest(
            spec=spec_for("hostile"),
            workspace=kw.pop("workspace", repo),
            output=tmp_path / "out",
            runtime="local",
            agent=["sh", "-c", script],
            **kw,  # the run root goes to the test's temp dir, checked for leftovers
        )
        return run(request)

    return go


def _recorded(result: RunResult) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((Path(result.output_path) / "run.json").read_text())
    assert record["run_id"] == result.run_id
    assert record["status"] == result.status
    return record


def _no_run_left(temp_dir: Path) -> None:
    assert [p.name for p in temp_dir.iterdir() if p.name.startswith("holon-")] == []


# --- Depth: no walk or removal of Holon's recurses ---------------------------------------------


@pytest.fixture
def deep_run(runtime: str, request: pytest.FixtureRequest, make_repo: Callable[..., Path]) -> Any:
    """The test agent's `deep_tree` mode in either runtime, its run root in the test's temp dir."""
    image = request.getfixturevalue("agent_image") if runtime == "docker" else None
    repo = make_repo(dirty=False)
    output = repo.parent / "out"
    return run(
        RunRequest(
            spec=spec_for("deep_tree"),
            workspace=repo,
            output=output,
            runtime=runtime,
            image=image,
            agent=None if runtime == "docker" else ["sh", str(AGENT_SCRIPT)],
        )
    )


def test_tree_deeper_than_pythons_recursion_is_carried_and_cleaned_up(
    deep_run: RunResult, temp_dir: Path
) -> None:
    result = deep_run
    assert result.status == "completed", result.reason
    assert int(result.exit_code) == 0
    record = _recorded(result)
    assert record["patch"]["source"] == "runner"
    patch = (Path(result.output_path) / "diff.patch").read_bytes()
    assert b"+agent line" in patch
    assert ("b/" + "a/" * DEPTH + "leaf.txt").encode() in patch
    assert b"+deep work" in patch
    _no_run_left(temp_dir)


def test_deep_tree_kept_out_of_the_patch_by_an_ignore_rule_is_still_removed(
    agent: Callable[..., RunResult], temp_dir: Path
) -> None:
    # build/ is ignored in the test repository: git never enters it, the removal still must.
    result = agent(
        'mkdir -p "$HOLON_WORKSPACE_DIR/build/x" && export D="$HOLON_WORKSPACE_DIR/build/x"; '
        f'{_deep("D", 3000, "b")}; echo more >> "$HOLON_WORKSPACE_DIR/tracked.txt"; {MANIFEST_OK}'
    )
    _made(result)
    assert result.status == "completed", result.reason
    assert b"+more" in (Path(result.output_path) / "diff.patch").read_bytes()
    _no_run_left(temp_dir)


@pytest.mark.parametrize("name", ["run.json", "diff.patch", "run.log"])
def test_deep_directory_at_a_runner_file_name_is_removed_and_recorded(
    agent: Callable[..., RunResult], temp_dir: Path, name: str
) -> None:
    script = f'mkdir "$HOLON_OUTPUT_DIR/{name}" && export D="$HOLON_OUTPUT_DIR/{name}"; '
    result = agent(f"{script}{_deep('D', DEPTH, 'a')}; {MANIFEST_OK}")
    _made(result)
    out = Path(result.output_path)
    assert (out / name).is_file()
    assert result.status == "failed"
    assert any(name in v and "directory (removed)" in v for v in result.violations)
    assert _recorded(result)["violations"] == result.violations
    _no_run_left(temp_dir)


# --- Path length: what git cannot record fails the run instead of vanishing ----------------------


def test_path_longer_than_git_can_record_fails_the_run_honestly(
    agent: Callable[..., RunResult], temp_dir: Path
) -> None:
    # 25 levels of 200 bytes: git warns and leaves such a path out, exit 0; Holon refuses.
    result = agent(
        f"{_deep('HOLON_WORKSPACE_DIR', 25, 'd' * 200)}; "
        f'echo more >> "$HOLON_WORKSPACE_DIR/tracked.txt"; {MANIFEST_OK}'
    )
    _made(result)
    assert (result.status, int(result.exit_code)) == ("failed", 1)
    assert "cannot be recorded" in result.reason
    assert f"longer than git can record (at most {PATH_MAX - 1} bytes)" in result.reason
    assert len(result.reason) < 400  # the path is shortened, not printed whole
    assert result.patch is not None
    assert result.patch.path is None
    assert not (Path(result.output_path) / "diff.patch").exists()
    record = _recorded(result)
    assert record["closure"]["closure_outcome"] == "failed"
    _no_run_left(temp_dir)


def test_path_longer_than_git_can_record_inside_a_nested_repository_fails_the_run(
    agent: Callable[..., RunResult], temp_dir: Path
) -> None:
    result = agent(
        'mkdir "$HOLON_WORKSPACE_DIR/app" && export D="$HOLON_WORKSPACE_DIR/app" && '
        'echo "gitdir: /nowhere" > "$D/.git"; '
        f"{_deep('D', 25, 'd' * 200)}; {MANIFEST_OK}"
    )
    _made(result)
    assert result.status == "failed"
    assert "longer than git can record" in result.reason
    _no_run_left(temp_dir)


def test_path_longer_than_git_can_record_in_an_ignored_directory_is_no_loss(
    agent: Callable[..., RunResult], temp_dir: Path
) -> None:
    result = agent(
        'mkdir "$HOLON_WORKSPACE_DIR/build" && export D="$HOLON_WORKSPACE_DIR/build"; '
        f'{_deep("D", 25, "d" * 200)}; echo more >> "$HOLON_WORKSPACE_DIR/tracked.txt"; '
        f"{MANIFEST_OK}"
    )
    _made(result)
    assert result.status == "completed", result.reason
    assert b"+more" in (Path(result.output_path) / "diff.patch").read_bytes()
    _no_run_left(temp_dir)


def test_longest_path_git_can_record_is_carried(
    agent: Callable[..., RunResult], temp_dir: Path
) -> None:
    # 20 directories of 200 bytes, then a file name that makes the path exactly PATH_MAX - 1.
    name = "f" * (PATH_MAX - 1 - 20 * 201)
    result = agent(
        _python(
            "import os\n"
            "fd = os.open(os.environ['HOLON_WORKSPACE_DIR'], os.O_RDONLY)\n"
            "for _ in range(20):\n"
            "    os.mkdir('d' * 200, dir_fd=fd)\n"
            "    step = os.open('d' * 200, os.O_RDONLY, dir_fd=fd)\n"
            "    os.close(fd)\n"
            "    fd = step\n"
            f"os.close(os.open({name!r}, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))\n"
            "print('made')\n"
        )
        + f"; {MANIFEST_OK}"
    )
    _made(result)
    assert result.status == "completed", result.reason
    patch = (Path(result.output_path) / "diff.patch").read_bytes()
    assert ("/".join(["d" * 200] * 20) + "/" + name).encode() in patch
    _no_run_left(temp_dir)


# --- Special files: left out the same way wherever they are -------------------------------------


def test_special_files_are_left_out_wherever_they_are(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    result = run_agent("special_files", make_repo(dirty=False))
    assert result.status == "completed", result.reason
    patch = (Path(result.output_path) / "diff.patch").read_bytes()
    assert b"+agent line" in patch
    assert b"+int main;" in patch  # the nested repository's regular file is carried
    assert b".fifo" not in patch
    assert b"app/.git" not in patch


@pytest.mark.parametrize("where", ["top", "nested", "below-nested"])
@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_fifo_or_socket_is_left_out_at_the_top_and_in_a_nested_repository(
    agent: Callable[..., RunResult], kind: str, where: str
) -> None:
    directory = {"top": "", "nested": "app/", "below-nested": "app/src/"}[where]
    # Made from inside its directory: a socket's address is limited to 108 bytes.
    make = (
        "os.mkfifo('special')"
        if kind == "fifo"
        else "s = socket.socket(socket.AF_UNIX); s.bind('special'); s.close()"
    )
    script = (
        'mkdir -p "$HOLON_WORKSPACE_DIR/app/src" && git -C "$HOLON_WORKSPACE_DIR/app" init -q && '
        'echo code > "$HOLON_WORKSPACE_DIR/app/src/code.c"; '
        + _python(
            f"import os, socket\nos.chdir(os.path.join(os.environ['HOLON_WORKSPACE_DIR'], "
            f"'{directory}.'))\n{make}\nprint('made')\n"
        )
        + f"; {MANIFEST_OK}"
    )
    result = agent(script)
    _made(result)
    assert result.status == "completed", result.reason
    assert result.violations == []
    patch = (Path(result.output_path) / "diff.patch").read_bytes()
    assert b"+code" in patch
    assert b"special" not in patch


# --- Unreadable directories: git would skip them with a warning ---------------------------------


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    if subprocess.run(["which", "setpriv"], capture_output=True).returncode != 0:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def shared() -> Iterator[Path]:
    place = Path(tempfile.mkdtemp(prefix="shared-"))
    os.chmod(place, 0o777)
    yield place
    remove_tree(place)


def test_directory_the_agent_locked_fails_the_run_and_is_still_cleaned_up(shared: Path) -> None:
    prefix = _unprivileged()
    (shared / "ws").mkdir()
    (shared / "ws" / "file.txt").write_text("x\n")
    (shared / "tmp").mkdir()
    (shared / "spec.yaml").write_text("version: v1\nkind: Holon\ngoal: {description: x}\n")
    (shared / "agent.sh").write_text(
        'mkdir -p "$HOLON_WORKSPACE_DIR/locked/in" && echo work > "$HOLON_WORKSPACE_DIR/locked/w"\n'
        'chmod 000 "$HOLON_WORKSPACE_DIR/locked/in" "$HOLON_WORKSPACE_DIR/locked"\n'
        f"{MANIFEST_OK}\n"
    )
    if prefix:
        for path in [shared, *shared.rglob("*")]:
            os.chown(path, 65534, 65534)
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(shared / "tmp"), "HOME": str(shared)}
    argv = [*prefix, sys.executable, "-m", "holon", "run", "--spec", str(shared / "spec.yaml")]
    argv += ["--workspace", str(shared / "ws"), "--output", str(shared / "out")]
    argv += ["--runtime", "local", "--agent", f"sh {shared / 'agent.sh'}"]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    record = json.loads((shared / "out" / "run.json").read_text())
    assert record["status"] == "failed"
    assert "locked cannot be read" in record["reason"]
    assert list((shared / "tmp").iterdir()) == []  # the locked run root went too
