"""JSON Schemas of every contract document, exported to `schemas/` and checked by a test.

Run `python -m holon.schemas` to regenerate, `python -m holon.schemas --check` to verify.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def _spec() -> type[BaseModel]:
    from holon.contract.spec import Spec

    return Spec


def _manifest() -> type[BaseModel]:
    from holon.contract.manifest import Manifest

    return Manifest


def _run() -> type[BaseModel]:
    from holon.runner.record import RunResult

    return RunResult


def _evidence() -> type[BaseModel]:
    from holon.closure.evidence import Evidence

    return Evidence


def _closure() -> type[BaseModel]:
    from holon.closure.record import ClosureRecord

    return ClosureRecord


def _handoff() -> type[BaseModel]:
    from holon.closure.handoff import Handoff

    return Handoff


def _envelope() -> type[BaseModel]:
    from holon.gateway.envelope import EventEnvelope

    return EventEnvelope


def _intent() -> type[BaseModel]:
    from holon.controller.intent import ActionIntent

    return ActionIntent


def _state() -> type[BaseModel]:
    from holon.state.model import ServeState

    return ServeState


def _action() -> type[BaseModel]:
    from holon.executor.result import ActionResult

    return ActionResult


# file stem -> (model, which side of validation the schema describes)
SCHEMAS: dict[str, tuple[Callable[[], type[BaseModel]], str]] = {
    "spec": (_spec, "validation"),  # what a user may write
    "manifest": (_manifest, "validation"),  # what an agent may write
    "run": (_run, "serialization"),  # what the runner writes
    "evidence": (_evidence, "validation"),  # what a runtime records
    "closure": (_closure, "serialization"),  # what `holon closure derive` prints
    "handoff": (_handoff, "serialization"),  # what the handoff renderers read
    "envelope": (_envelope, "serialization"),  # what the gateway hands the controller
    "intent": (_intent, "serialization"),  # what deciders propose and the executor performs
    "action": (_action, "serialization"),  # a line of actions.ndjson
    "state": (_state, "validation"),  # state.json
}

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "schemas"


def render(name: str) -> str:
    factory, mode = SCHEMAS[name]
    schema: dict[str, Any] = factory().model_json_schema(mode=mode)  # type: ignore[arg-type]
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
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--check", action="store_true", help="exit 1 if any schema is stale")
    args = parser.parse_args(argv)
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
