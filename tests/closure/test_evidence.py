"""Bad evidence: one line naming the offending item, exit 64."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.cli.main import main
from holon.closure.evidence import parse_evidence
from holon.errors import InvalidInput

T = "2026-11-21T10:00:00Z"


def _item(**kw: object) -> dict[str, object]:
    return {"source": "test", "at": T, **kw}


BAD = [
    (
        [
            _item(
                id="t1",
                kind="task",
                task_id="t1",
                state="completed",
                closure={"outcome": "completed", "waiting_reason": "awaiting_timer"},
            )
        ],
        "evidence item 't1' (task): closure: waiting_reason awaiting_timer on a completed closure",
    ),
    ([_item(id="w1", kind="wait")], "evidence item 'w1' (wait): wait without a reason"),
    (
        [_item(id="w2", kind="wait", on="timer")],
        "evidence item 'w2' (wait): timer wait without `until`",
    ),
    (
        [_item(id="w3", kind="wait", on="external")],
        "evidence item 'w3' (wait): external wait without",
    ),
    (
        [_item(id="w4", kind="wait", on="operator")],
        "evidence item 'w4' (wait): operator wait without",
    ),
    (
        [_item(id="w5", kind="wait", on="task", task_id="t9")],
        "evidence item 'w5' (wait): waits on task 't9', which no task item creates",
    ),
    (
        [_item(id="a", kind="work_item"), _item(id="a", kind="work_item")],
        "evidence item 'a': duplicate id",
    ),
    ([_item(id="r1", kind="run", state="done")], "evidence item 'r1' (run): state"),
    (
        [_item(id="r1", kind="run", state="completed"), _item(id="r2", kind="run", state="failed")],
        "evidence item 'r2' (run): a unit has one run item",
    ),
    (
        [
            {
                "id": "n1",
                "kind": "run",
                "source": "t",
                "at": "2026-11-21T10:00:00",
                "state": "completed",
            }
        ],
        "evidence item 'n1' (run): at: Input should have timezone info",
    ),
    ([_item(kind="claim", text="x")], "evidence item #1 (claim): id: Field required"),
]


@pytest.mark.parametrize(("items", "message"), BAD)
def test_bad_evidence(items: list[dict[str, object]], message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_evidence(json.dumps({"items": items}), source="ev.json")
    text = str(info.value)
    assert text.startswith("ev.json: ")
    assert message in text
    assert "\n" not in text


def test_cli_bad_input_exit_64(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ev.json"
    path.write_text("{not json")
    assert main(["closure", "derive", str(path)]) == 64
    assert "invalid JSON" in capsys.readouterr().err
    path.write_text(json.dumps({"items": [_item(id="w9", kind="wait", on="task", task_id="x")]}))
    assert main(["closure", "derive", str(path)]) == 64
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "'w9'" in err[0]
    assert main(["closure", "derive", str(tmp_path / "missing.json")]) == 64


def test_list_shorthand_and_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io
    import sys

    data = json.dumps([_item(id="r", kind="run", state="completed", outcome="success")])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    assert main(["closure", "derive", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["lifecycle_outcome"] == "finished"


def test_one_pass_validation_matches_two_passes() -> None:
    """The evidence document is validated straight from its bytes (one pass); what it yields is
    what parsing then validating yields, and refused documents keep their one-line messages."""
    from holon import jsonio
    from holon.closure.evidence import Evidence, parse_evidence

    raw = json.dumps(
        {
            "unit": {"kind": "task", "id": "t"},
            "items": [
                {
                    "id": "a",
                    "source": "s",
                    "at": "2026-01-01T00:00:00Z",
                    "kind": "text",
                    "text": "é",
                },
                {
                    "id": "r",
                    "source": "s",
                    "at": "2026-01-01T00:00:01Z",
                    "kind": "run",
                    "state": "completed",
                    "outcome": "success",
                },
            ],
        }
    ).encode()
    assert parse_evidence(raw) == Evidence.model_validate(jsonio.loads(raw, "x"))
    dup = raw.replace(b'"id": "r"', b'"id": "a"')
    with pytest.raises(InvalidInput, match=r"^e: evidence item 'a': duplicate id$"):
        parse_evidence(dup, source="e")
    with pytest.raises(InvalidInput, match=r"^e: invalid JSON at line 1"):
        parse_evidence(raw + b"}", source="e")
    with pytest.raises(InvalidInput, match="lone surrogate"):
        parse_evidence(raw.replace(b"\\u00e9", b"\\ud800"), source="e")


def test_valid_evidence_is_not_parsed_to_python_objects_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A valid document takes the one pass: the two-pass reader is not called at all."""
    from holon import jsonio

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("parsed to Python objects first")

    monkeypatch.setattr(jsonio, "loads", refuse)
    item = {
        "id": "r",
        "source": "s",
        "at": "2026-01-01T00:00:00Z",
        "kind": "run",
        "state": "failed",
    }
    raw = json.dumps({"items": [item]}).encode()
    assert parse_evidence(raw).items[0].id == "r"
