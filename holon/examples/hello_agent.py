"""A bundled example agent that speaks the Agent Contract without any model.

It reads the spec, records the goal in the workspace as a change a reviewer can see, writes a
summary and a manifest, and supports `--probe`. Run it through `holon run --runtime local --agent
"python -m holon.examples.hello_agent"`; the README's offline demo does exactly that.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import yaml

NOTES = "HOLON_NOTES.md"


def _write_manifest(output: Path, outcome: str, started: float, **extra: object) -> None:
    manifest = {
        "status": "completed" if outcome != "failure" else "failed",
        "outcome": outcome,
        "duration": f"{time.monotonic() - started:.3f}s",
        "artifacts": ["summary.md"] if outcome == "success" else [],
        "metadata": {"agent": "holon-hello-agent", "version": "1", "mode": "example"},
        **extra,
    }
    (output / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def main(argv: list[str]) -> int:
    started = time.monotonic()
    input_dir = Path(os.environ.get("HOLON_INPUT_DIR", "/holon/input"))
    workspace = Path(os.environ.get("HOLON_WORKSPACE_DIR", "/holon/workspace"))
    output = Path(os.environ.get("HOLON_OUTPUT_DIR", "/holon/output"))
    spec_path = input_dir / "spec.yaml"
    if "--probe" in argv:
        if not spec_path.is_file() or not os.access(output, os.W_OK):
            return 1
        _write_manifest(output, "success", started, metadata={"mode": "probe"})
        return 0
    try:
        spec = yaml.safe_load(spec_path.read_text())
        goal = str(spec["goal"]["description"])
    except (OSError, KeyError, TypeError, yaml.YAMLError) as exc:
        _write_manifest(output, "failure", started, error=f"cannot read spec: {exc}")
        return 1

    notes = workspace / NOTES
    previous = notes.read_text() if notes.exists() else "# Notes from Holon\n"
    notes.write_text(f"{previous}\n- Goal received: {goal}\n")
    (output / "summary.md").write_text(
        f"# Summary\n\nRecorded the goal in `{NOTES}`.\n\nGoal: {goal}\n"
    )
    _write_manifest(output, "success", started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
