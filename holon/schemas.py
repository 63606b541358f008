"""JSON Schemas of every contract document, exported to `schemas/` and checked by a test.

Run `python -m holon.schemas` to regenerate, `python -m holon.schemas --check` to verify.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode

# file stem -> (model as "module:Class", which side of validation the schema describes).
# An explicit registry, imported only when a schema is rendered.
SCHEMAS: dict[str, tuple[str, JsonSchemaMode]] = {
    "spec": ("holon.contract.spec:Spec", "validation"),  # what a user may write
    "manifest": ("holon.contract.manifest:Manifest", "validation"),  # what an agent may write
    "run": ("holon.runner.record:RunResult", "serialization"),  # what the runner writes
    "evidence": ("holon.closure.evidence:Evidence", "validation"),  # what a runtime records
    "closure": ("holon.closure.record:ClosureRecord", "serialization"),  # `closure derive`
    "handoff": ("holon.closure.handoff:Handoff", "serialization"),  # what renderers read
    "envelope": ("holon.gateway.envelope:EventEnvelope", "serialization"),  # gateway output
    "intent": ("holon.intent:ActionIntent", "serialization"),  # decided actions
    "action": ("holon.executor.result:ActionResult", "serialization"),  # actions.ndjson lines
    "pass": ("holon.controller.pass_report:PassReport", "serialization"),  # one pass's report
    "state": ("holon.state.model:ServeState", "validation"),  # state.json
    "context": ("holon.contract.context:ContextManifest", "serialization"),  # context manifest
    "config": ("holon.skills.config:RepoConfig", "validation"),  # .holon/config.yaml
    "report": ("holon.report.aggregate:Report", "serialization"),  # `holon report --json`
}


def _model(reference: str) -> type[BaseModel]:
    module, _, name = reference.partition(":")
    model = getattr(importlib.import_module(module), name)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{reference} is not a pydantic model")
    return model


def default_dir() -> Path:
    """`schemas/` of the checkout, or the copy an installed package carries."""
    from holon.packaged import data_dir

    return data_dir("schemas")


def render(name: str) -> str:
    reference, mode = SCHEMAS[name]
    schema: dict[str, Any] = _model(reference).model_json_schema(mode=mode)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"holon/{name}",
        **schema,
    }
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def stale(directory: Path) -> list[str]:
    """Names whose file in `directory` differs from the models."""
    out = []
    for name in SCHEMAS:
        path = directory / f"{name}.schema.json"
        if not path.is_file() or path.read_text(encoding="utf-8") != render(name):
            out.append(name)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m holon.schemas")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--check", action="store_true", help="exit 1 if any schema is stale")
    args = parser.parse_args(argv)
    if args.dir is None:
        args.dir = default_dir()
    if args.check:
        names = stale(args.dir)
        for name in names:
            print(f"stale: {args.dir / name}.schema.json", file=sys.stderr)
        return 1 if names else 0
    from holon.fsutil import atomic_write_text

    for name in SCHEMAS:
        atomic_write_text(args.dir / f"{name}.schema.json", render(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
