from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.contract.manifest import ManifestError, load_manifest, parse_manifest


def _parse(data: object) -> object:
    return parse_manifest(json.dumps(data).encode())


def test_every_field_and_unknown_fields_kept() -> None:
    manifest = parse_manifest(
        json.dumps(
            {
                "status": "completed",
                "outcome": "needs_human",
                "duration": "12.5s",
                "artifacts": ["diff.patch", {"name": "report", "path": "out/report.md"}],
                "metadata": {
                    "agent": "holon-agent",
                    "version": "0.2.0",
                    "mode": "solve",
                    "engine": {"model": "claude-x", "version": "1.2", "provider": "anthropic"},
                    "host": "ci",
                },
                "error": None,
                "question": {"id": "q-1", "text": "Which branch?"},
                "tokens": {"input": 10, "output": 3},
            }
        ).encode()
    )
    assert manifest.status == "completed"
    assert manifest.outcome == "needs_human"
    assert manifest.duration == 12.5
    assert [(a.name, a.path) for a in manifest.artifacts] == [
        ("diff.patch", "diff.patch"),
        ("report", "out/report.md"),
    ]
    assert manifest.metadata.agent == "holon-agent"
    assert manifest.metadata.version == "0.2.0"
    assert manifest.metadata.mode == "solve"
    assert manifest.metadata.engine is not None
    assert manifest.metadata.engine.model == "claude-x"
    assert manifest.metadata.engine.model_extra == {"provider": "anthropic"}
    assert manifest.metadata.model_extra == {"host": "ci"}
    assert manifest.question is not None
    assert manifest.question.id == "q-1"
    assert manifest.model_extra == {"tokens": {"input": 10, "output": 3}}
    # Kept fields survive a dump.
    assert manifest.model_dump()["tokens"] == {"input": 10, "output": 3}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(12.5, 12.5), ("12.5s", 12.5), ("2m", 120.0), (0, 0.0), ("0s", 0.0), ("0.000s", 0.0)],
)
def test_duration_string_or_number(value: object, seconds: float) -> None:
    manifest = _parse({"status": "completed", "outcome": "success", "duration": value})
    assert manifest.duration == seconds  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"outcome": "success"}, "status: Field required"),
        ({"status": "done", "outcome": "success"}, "status: Input should be"),
        ({"status": "completed", "outcome": "ok"}, "outcome: Input should be"),
        ({"status": "completed", "outcome": "success", "duration": -1}, "duration"),
        ({"status": "completed", "outcome": "success", "duration": "soon"}, "invalid duration"),
        (
            {"status": "completed", "outcome": "success", "artifacts": [{"name": "x"}]},
            "artifacts.0.path",
        ),
        (
            {"status": "completed", "outcome": "needs_human", "question": {"id": "q"}},
            "question.text",
        ),
        ([], "expected a JSON object"),
    ],
)
def test_invalid_manifests(data: object, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        _parse(data)
    assert message in str(info.value)


def test_not_json_and_missing(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="invalid JSON"):
        parse_manifest(b"{nope")
    with pytest.raises(ManifestError, match="missing"):
        load_manifest(tmp_path / "manifest.json")
