"""`holon agent [--probe] [--engine NAME] [--model M]`: the agent side of the Agent Contract, the
entrypoint of an agent image (docs/agent.md)."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--probe",
        action="store_true",
        help="check readiness without calling a model: spec, output, the engine's credentials",
    )
    parser.add_argument(
        "--engine",
        metavar="NAME",
        help="builtin, replay, claude-code or codex (default: $HOLON_ENGINE, else builtin)",
    )
    parser.add_argument(
        "--model", metavar="M", help="the model to use (default: $HOLON_MODEL, else the engine's)"
    )


def main(args: argparse.Namespace) -> int:
    from holon.agent.main import Options, run_agent

    return run_agent(Options(probe=args.probe, engine=args.engine, model=args.model))
