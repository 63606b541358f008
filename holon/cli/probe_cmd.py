"""`holon probe`: a contract readiness check (runs the agent with --probe)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from holon.cli._common import add_backend_arguments, backend_fields
from holon.cli._io import print_json
from holon.terminal import line


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spec", metavar="FILE", help="spec to give the agent (default: a minimal one)"
    )
    parser.add_argument(
        "--output", metavar="DIR", help="keep the probe's output here (default: discarded)"
    )
    add_backend_arguments(parser)


def main(args: argparse.Namespace) -> int:
    from holon.contract.spec import load_spec
    from holon.runner import RunRequest, probe
    from holon.runner.probe import PROBE_SPEC

    spec = load_spec(Path(args.spec)) if args.spec else PROBE_SPEC
    with tempfile.TemporaryDirectory(prefix="holon-probe-out-") as scratch:
        request = RunRequest(
            spec=spec,
            workspace=Path(scratch),
            output=Path(args.output) if args.output else Path(scratch) / "output",
            **backend_fields(args),
        )
        result = probe(request)
        if args.json:
            print_json(result.model_dump_json(indent=2))
        elif result.exit_code == 0:
            print(f"probe ok: {result.runtime} agent answered --probe with a valid manifest")
        else:
            print(line(f"probe failed: {result.reason}"))  # the reason may quote the agent
    return 0 if result.exit_code == 0 else 1
