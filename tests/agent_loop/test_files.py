"""`view` and `edit`: real files in a tmp workspace, and every way out of it refused."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from holon.agent.conversation import ToolCall
from holon.agent.tools import Toolbox, ToolOutcome
from tests.agent_loop.fakes import FakeRecorder, call, make_task


@pytest.fixture
def box(tmp_path: Path) -> Toolbox:
    return Toolbox(make_task(tmp_path, output_cap=4096), FakeRecorder())


@pytest.fixture
def ws(tmp_path: Path, box: Toolbox) -> Path:
    return tmp_path / "workspace"


def _run(box: Toolbox, name: str, **arguments: Any) -> ToolOutcome:
    return box.execute(call(name, arguments))


def _view(box: Toolbox, path: str, **extra: Any) -> ToolOutcome:
    return _run(box, "view", path=path, **extra)


def _edit(box: Toolbox, path: str, old: str, new: str) -> ToolOutcome:
    return _run(box, "edit", path=path, old=old, new=new)


def test_view_numbers_lines_and_pages_through_a_file(box: Toolbox, ws: Path) -> None:
    (ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    whole = _view(box, "a.txt")
    assert not whole.is_error
    assert whole.text.splitlines()[0] == "a.txt (lines 1-10)"
    assert "     3\tline 3" in whole.text
    part = _view(box, "a.txt", start_line=4, end_line=5)
    assert part.text.splitlines()[1:3] == ["     4\tline 4", "     5\tline 5"]
    assert "view it with start_line=6" in part.text
    assert "past the end" in _view(box, "a.txt", start_line=50).text
    assert _view(box, "a.txt", start_line=5, end_line=2).is_error


def test_view_is_bounded_for_huge_files_and_lines(box: Toolbox, ws: Path) -> None:
    with (ws / "big.txt").open("w") as handle:
        handle.write("x" * 1_000_000 + "\n")
        for i in range(100_000):
            handle.write(f"row {i}\n")
    result = _view(box, "big.txt")
    assert len(result.text) < 4096 + 200
    assert "[... line cut ...]" in result.text
    assert "the file goes on" in result.text


def test_view_lists_a_directory_and_names_binary_files(box: Toolbox, ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "m.py").write_text("x = 1\n")
    (ws / "blob.bin").write_bytes(b"\0\1\2" * 10)
    (ws / "dangling").symlink_to("nowhere")
    os.mkfifo(ws / "pipe")
    listing = _view(box, ".").text
    assert "src/" in listing
    assert "blob.bin  (30 bytes)" in listing
    assert "dangling@" in listing
    assert "pipe  (a special file)" in listing
    assert "src/ (1 entry)" in _view(box, "src").text
    assert _view(box, "blob.bin").text == "blob.bin is a binary file (30 bytes); not shown"
    fifo = _view(box, "pipe")  # refused without waiting for a writer
    assert fifo.is_error
    assert "not a file" in fifo.text
    assert _view(box, "missing.txt").text == "missing.txt: no such file or directory"


@pytest.mark.parametrize(
    "path",
    ["/proc/self/environ", "/etc/passwd", "../outside.txt", "sub/../../outside.txt", "/dev/null"],
)
def test_view_refuses_paths_outside_the_workspace(box: Toolbox, ws: Path, path: str) -> None:
    (ws.parent / "outside.txt").write_text("secret\n")
    (ws / "sub").mkdir()
    result = _view(box, path)
    assert result.is_error
    assert result.text == f"path outside the workspace: {path}"


def test_symlinks_out_of_the_workspace_are_refused(box: Toolbox, ws: Path) -> None:
    (ws.parent / "outside").mkdir()
    (ws.parent / "outside" / "f.txt").write_text("secret\n")
    (ws / "passwd").symlink_to("/etc/passwd")
    (ws / "up").symlink_to("../outside")
    (ws / "chain").symlink_to("up/f.txt")
    for path in ("passwd", "up/f.txt", "chain", "up"):
        result = _view(box, path)
        assert result.is_error, path
        assert result.text.startswith(f"path outside the workspace: {path} ("), result.text
    assert "(passwd is a symlink to /etc/passwd)" in _view(box, "passwd").text
    # Writing through them is refused the same way, and nothing outside changes.
    assert _edit(box, "up/f.txt", "secret", "pwned").is_error
    assert _edit(box, "up/new.txt", "", "planted").is_error
    assert _edit(box, "passwd", "root", "toor").is_error
    assert (ws.parent / "outside" / "f.txt").read_text() == "secret\n"
    assert not (ws.parent / "outside" / "new.txt").exists()


def test_symlinks_inside_the_workspace_are_followed(box: Toolbox, ws: Path) -> None:
    (ws / "docs").mkdir()
    (ws / "docs" / "README.md").write_text("hello\n")
    (ws / "README.md").symlink_to("docs/README.md")
    (ws / "d").symlink_to("docs")
    assert "     1\thello" in _view(box, "README.md").text
    assert "     1\thello" in _view(box, "d/README.md").text
    assert not _edit(box, "README.md", "hello", "bye").is_error
    assert (ws / "docs" / "README.md").read_text() == "bye\n"
    assert (ws / "README.md").is_symlink()  # the link stays, its target changed
    (ws / "loop").symlink_to("loop")
    assert "too many symlinks" in _view(box, "loop").text


def test_edit_replaces_exactly_one_match(box: Toolbox, ws: Path) -> None:
    target = ws / "m.py"
    target.write_text("a = 1\nb = 1\nc = 2\n")
    target.chmod(0o755)
    none = _edit(box, "m.py", "d = 1", "d = 2")
    assert none.is_error
    assert "old was not found in m.py" in none.text
    many = _edit(box, "m.py", "= 1", "= 3")
    assert many.is_error
    assert "old matches 2 times in m.py" in many.text
    done = _edit(box, "m.py", "b = 1\n", "b = 10\nb2 = 11\n")
    assert done.text == "edited m.py: replaced 1 occurrence (now lines 2-4)"
    assert target.read_text() == "a = 1\nb = 10\nb2 = 11\nc = 2\n"
    assert target.stat().st_mode & 0o777 == 0o755
    assert _edit(box, "m.py", "a", "a").is_error


def test_edit_with_an_empty_old_creates_a_new_file_only(box: Toolbox, ws: Path) -> None:
    created = _edit(box, "pkg/sub/new.py", "", "x = 1\ny = 2\n")
    assert created.text == "created pkg/sub/new.py (2 lines, 12 bytes)"
    assert (ws / "pkg" / "sub" / "new.py").read_text() == "x = 1\ny = 2\n"
    again = _edit(box, "pkg/sub/new.py", "", "other")
    assert again.is_error
    assert "already exists" in again.text
    (ws / "dangling").symlink_to("/tmp/holon-test-never-created")
    assert _edit(box, "dangling", "", "planted").is_error
    assert not Path("/tmp/holon-test-never-created").exists()


def test_edit_refuses_paths_outside_and_the_agents_own_outputs(
    box: Toolbox, ws: Path, tmp_path: Path
) -> None:
    out = tmp_path / "output"
    outside = tmp_path / "elsewhere.txt"
    result = _edit(box, str(outside), "", "x")
    assert result.text == f"path outside the workspace: {outside}"
    assert not outside.exists()
    assert _edit(box, "../elsewhere.txt", "", "x").is_error
    assert not outside.exists()
    for own in ("manifest.json", "summary.md", "evidence/transcript.ndjson", "evidence"):
        refused = _edit(box, str(out / own), "", "{}")
        assert refused.is_error
        assert "the agent's own output" in refused.text
        assert not (out / own).exists()
    assert "the agent's own output" in _view(box, str(out / "manifest.json")).text
    # The rest of the output directory is the model's to write (a skill's artifacts).
    assert not _edit(box, str(out / "review.json"), "", "[]").is_error
    assert (out / "review.json").read_text() == "[]"
    assert "review.json  (2 bytes)" in _view(box, str(out)).text


def test_an_output_directory_inside_the_workspace_keeps_its_own_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    task = make_task(tmp_path, workspace=ws)
    task = type(task)(**{**task.__dict__, "output": ws / "out"})
    (ws / "out").mkdir()
    box = Toolbox(task, FakeRecorder())
    refused = _edit(box, "out/manifest.json", "", "{}")
    assert "the agent's own output" in refused.text
    assert not (ws / "out" / "manifest.json").exists()


@pytest.mark.parametrize(
    ("tool_call", "message"),
    [
        (call("view", {}), "bad arguments for view: path: Field required"),
        (call("view", {"path": 3}), "bad arguments for view: path: Input should be a valid string"),
        (call("edit", {"path": "a", "old": "x"}), "bad arguments for edit: new: Field required"),
        (
            call("view", {"path": "a", "file_path": "a"}),
            "bad arguments for view: file_path: Extra inputs are not permitted",
        ),
        (
            call("shell", None, raw_arguments='{"command": "ls'),
            'the arguments of shell were not a JSON object (received: "{\\"command\\": \\"ls")',
        ),
        (
            call("rm_rf", {"path": "/"}),
            "unknown tool 'rm_rf'; the tools are shell, view, edit, finish",
        ),
        (
            call("finish", {"status": "done", "summary": "x"}),
            "bad arguments for finish: status: Input should be 'success', 'failure' or "
            "'needs_human'",
        ),
    ],
)
def test_bad_calls_are_error_results(box: Toolbox, tool_call: ToolCall, message: str) -> None:
    result = box.execute(tool_call)
    assert result.is_error
    assert result.finish is None
    assert result.text == message


def test_finish_is_checked_against_the_recorded_commands(box: Toolbox) -> None:
    box.execute(call("shell", {"command": "exit 1"}))
    box.execute(call("shell", {"command": "true"}))
    cited_unknown = box.execute(
        call("finish", {"status": "success", "summary": "x", "verification": [7]})
    )
    assert "command #7, which was never run" in cited_unknown.text
    cited_failed = box.execute(
        call("finish", {"status": "success", "summary": "x", "verification": [1]})
    )
    assert "command #1, which did not pass" in cited_failed.text
    assert cited_failed.finish is None
    no_question = box.execute(call("finish", {"status": "needs_human", "summary": "x"}))
    assert "needs a question" in no_question.text
    done = box.execute(
        call("finish", {"status": "success", "summary": "fixed", "verification": [2]})
    )
    assert done.finish is not None
    assert done.finish.verification == [2]
    # A failure may cite what failed: it is the honest account.
    failed = box.execute(call("finish", {"status": "failure", "summary": "x", "verification": [1]}))
    assert failed.finish is not None


def test_an_edit_moves_the_mtime_to_a_later_second(box: Toolbox, ws: Path) -> None:
    """A same-size edit within the second would leave Python's .pyc (keyed on whole-second
    mtime and size) looking current, and the old code would run."""
    target = ws / "calc.py"
    target.write_text("def add(a, b):\n    return a - b\n")
    before = target.stat().st_mtime
    assert not _edit(box, "calc.py", "a - b", "a + b").is_error
    assert int(target.stat().st_mtime) > int(before)


def test_the_offered_schemas_match_what_the_tools_accept() -> None:
    from pydantic import BaseModel

    from holon.agent.engine import Finish, Question
    from holon.agent.tools import SPECS, EditArgs, ShellArgs, ViewArgs

    models: dict[str, type[BaseModel]] = {
        "shell": ShellArgs,
        "view": ViewArgs,
        "edit": EditArgs,
        "finish": Finish,
    }
    for spec in SPECS:
        model = models[spec.name]
        schema = spec.parameters
        assert set(schema["properties"]) == set(model.model_fields), spec.name
        required = {n for n, f in model.model_fields.items() if f.is_required()}
        assert set(schema["required"]) == required, spec.name
        assert schema["additionalProperties"] is False
    question = next(s for s in SPECS if s.name == "finish").parameters["properties"]["question"]
    assert set(question["properties"]) == set(Question.model_fields)


def test_the_input_is_readable_and_never_writable(tmp_path: Path) -> None:
    import dataclasses

    context = tmp_path / "input" / "context"
    context.mkdir(parents=True)
    (context / "issue.md").write_text("line one\nthe whole issue\n")
    task = dataclasses.replace(make_task(tmp_path), input=tmp_path / "input")
    box = Toolbox(task, FakeRecorder())
    (tmp_path / "workspace" / "ctx").symlink_to(context)
    seen = _view(box, str(context / "issue.md"))
    assert not seen.is_error
    assert "the whole issue" in seen.text
    assert "the whole issue" in _view(box, "ctx/issue.md").text  # a link into the input, read
    for path in (str(context / "issue.md"), "ctx/issue.md"):
        changed = _edit(box, path, "line one", "line 1")
        assert changed.is_error
        assert "read-only" in changed.text
    created = _edit(box, str(context / "new.md"), "", "x")
    assert created.is_error
    assert not (context / "new.md").exists()
    assert (context / "issue.md").read_text() == "line one\nthe whole issue\n"
    # Without an input root, the input is outside like anything else.
    assert _view(Toolbox(make_task(tmp_path), FakeRecorder()), str(context / "issue.md")).is_error
