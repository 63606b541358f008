"""Write replay.ndjson from GitHub's example payloads and the field edits in edits.yaml.

Run from the repository root: `python examples/serve/build.py [DIR]` (DIR: an example
directory holding edits.yaml, by default this one; `examples/solve` is the other). The
payloads are GitHub's own examples (tests/fixtures/octokit-webhooks/examples.json, MIT,
Octokit contributors).
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "tests" / "fixtures" / "octokit-webhooks" / "examples.json"


def _set(payload: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = payload
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def build(here: Path = HERE) -> str:
    examples = {e["name"]: e["examples"] for e in json.loads(EXAMPLES.read_text())}
    lines = []
    for edit in yaml.safe_load((here / "edits.yaml").read_text()):
        if "payload" in edit:
            payload = edit["payload"]
        else:
            matching = [p for p in examples[edit["event"]] if p.get("action") == edit["action"]]
            payload = copy.deepcopy(matching[edit.get("example", 0)])
        for path, value in (edit.get("set") or {}).items():
            _set(payload, path, value)
        line = {"event": edit["event"], "delivery": edit["delivery"], "payload": payload}
        lines.append(json.dumps(line, sort_keys=True))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE
    (target / "replay.ndjson").write_text(build(target))
    sys.exit(0)
