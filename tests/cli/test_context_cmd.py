"""`holon context collect`: a payload file in, the context directory and its manifest out; a bad
payload, an existing non-empty directory or a repository that disagrees is one line, exit 64."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.cli.main import main
from holon.github.context_source import NO_TOKEN
from tests.gateway.conftest import example


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)


def _payload(tmp_path: Path, event: str = "issue_comment", action: str = "created") -> Path:
    path = tmp_path / f"{event}.json"
    path.write_text(json.dumps(example(event, action)))
    return path


def test_collect_prints_the_context_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "context"
    argv = ["context", "collect", "--event", "pull_request_review", "--json",
            "--payload", str(_payload(tmp_path, "pull_request_review", "submitted")),
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((out / "manifest.json").read_text())
    assert printed["subject"] == {"kind": "pull_request", "number": 2}
    assert printed["trigger"]["kind"] == "review"
    (review,) = json.loads((out / "reviews.json").read_text())
    assert review["trigger"] is True
    assert {"name": "diff", "reason": NO_TOKEN} in printed["missing"]


def test_collect_says_what_it_found_in_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "context"
    argv = ["context", "collect", "--event", "issue_comment",
            "--payload", str(_payload(tmp_path)), "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"context of issue #1 of Codertocat/Hello-World in {out} (from the payload)"
    assert "  present: issue.md (" in lines[1]
    assert lines[-1] == f"  missing: comments (more): {NO_TOKEN}"


@pytest.mark.parametrize(
    ("setup", "args", "said"),
    [
        (lambda t: (t / "p.json").write_text("{"), [], "invalid JSON"),
        (lambda t: (t / "p.json").write_text("[1]"), [], "JSON object"),
        (lambda t: (t / "out").mkdir() or (t / "out" / "x").write_text("x"), [], "is not empty"),
        (None, ["--repo", "other/repo"], "the payload is of Codertocat/Hello-World"),
        (None, ["--repo", "../x"], "--repo must name a repository as OWNER/NAME"),
        (None, ["--event", "push"], "names no issue or pull request"),
    ],
)
def test_bad_input_is_one_line_and_exit_64(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: object, args: list[str], said: str
) -> None:
    payload = _payload(tmp_path)
    if setup is not None:
        setup(tmp_path)  # type: ignore[operator]
        if (tmp_path / "p.json").exists():
            payload = tmp_path / "p.json"
    event = [] if "--event" in args else ["--event", "issue_comment"]
    argv = ["context", "collect", *event, "--payload", str(payload),
            "--out", str(tmp_path / "out"), *args]  # fmt: skip
    assert main(argv) == 64
    err = capsys.readouterr().err
    assert said in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
