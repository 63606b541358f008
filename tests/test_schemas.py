"""The exported JSON Schemas are current and agree with the models on real documents."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from holon.schemas import SCHEMAS, stale
from tests.contract.test_spec import FULL

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO / "schemas"


def test_exported_schemas_are_current() -> None:
    assert stale(DEFAULT_DIR) == [], "run `python -m holon.schemas` to regenerate schemas/"


def _schema(name: str) -> dict[str, object]:
    return json.loads((DEFAULT_DIR / f"{name}.schema.json").read_text())


def test_spec_schema_accepts_what_the_model_accepts() -> None:
    import yaml

    jsonschema.validate(yaml.safe_load(FULL), _schema("spec"))
    legacy = {
        "version": "v0.1",
        "kind": "Holon",
        "goal": {"description": "x"},
        "output": {"artifacts": ["diff.patch"]},
    }
    jsonschema.validate(legacy, _schema("spec"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"version": "v1", "kind": "Holon", "goal": {"description": "x"}, "bogus": 1},
            _schema("spec"),
        )


def test_manifest_schema_keeps_unknown_fields_and_legacy_shapes() -> None:
    doc = {
        "status": "completed",
        "outcome": "success",
        "duration": "1.5s",
        "artifacts": ["a", {"name": "b", "path": "b"}],
        "extra": 1,
    }
    jsonschema.validate(doc, _schema("manifest"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"status": "done", "outcome": "success"}, _schema("manifest"))


def test_every_registered_schema_exported() -> None:
    assert {p.name for p in DEFAULT_DIR.glob("*.schema.json")} == {
        f"{n}.schema.json" for n in SCHEMAS
    }


def test_evidence_and_closure_schemas_accept_the_examples() -> None:
    from holon.closure.derive import derive_closure
    from holon.closure.evidence import parse_evidence
    from holon.closure.record import ClosureRecord

    examples = REPO / "docs" / "examples" / "closure"
    paths = sorted(examples.glob("*.evidence.json"))
    assert paths
    for path in paths:
        raw = json.loads(path.read_text())
        jsonschema.validate(raw, _schema("evidence"))
        record = ClosureRecord.of(derive_closure(parse_evidence(path.read_bytes())))
        jsonschema.validate(record.model_dump(mode="json"), _schema("closure"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"items": [{"id": "x", "kind": "nope"}]}, _schema("evidence"))
