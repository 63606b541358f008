"""`holon eval [--scenarios DIR] [--policy FILE] [--decider NAME]... [--min-accuracy PCT]
[--json]`: the
decision evaluation (docs/eval.md). Every scenario is replayed through the controller with each
decider; the table (or JSON) says what each decided. Exit 0 when every decider asked for passes,
1 when one does not (unsafe, an error, below the threshold, the policy not as documented, or a
decider unavailable in this build), 64 for a bad scenario file."""

from __future__ import annotations

import argparse

DECIDERS = ("policy", "agent")


def _percent(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, got {value!r}") from None
    if not 0 <= number <= 100:
        raise argparse.ArgumentTypeError("a percentage is between 0 and 100")
    return number / 100


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenarios",
        metavar="DIR",
        help="a directory of scenario *.yaml files (default: the corpus shipped with Holon)",
    )
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="the policy the scenarios run under (default: the built-in policy)",
    )
    parser.add_argument(
        "--decider",
        action="append",
        choices=DECIDERS,
        help="score only this decider (repeatable; default: policy and agent)",
    )
    parser.add_argument(
        "--min-accuracy",
        type=_percent,
        metavar="PCT",
        default=None,
        help="the share of scenarios a decider must get right, in percent (default 90)",
    )
    parser.add_argument("--json", action="store_true", help="the scores and every result as JSON")


def main(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from holon.cli._io import print_json
    from holon.controller.policy import load_policy
    from holon.eval.harness import Contender, agent_contender, evaluate, policy_contender
    from holon.eval.report import DEFAULT_MIN_ACCURACY, as_json, scores, table
    from holon.eval.scenario import builtin_dir, load_scenarios

    directory = Path(args.scenarios) if args.scenarios else builtin_dir()
    scenarios = load_scenarios(directory)
    wanted = args.decider or list(DECIDERS)
    makers = {"policy": policy_contender, "agent": agent_contender}
    contenders: list[Contender] = [makers[name]() for name in DECIDERS if name in wanted]
    policy = load_policy(Path(args.policy)) if args.policy else None
    results = evaluate(scenarios, contenders, policy)
    minimum = DEFAULT_MIN_ACCURACY if args.min_accuracy is None else args.min_accuracy
    found = scores(results, minimum)
    if args.json:
        print_json(json.dumps(as_json(results, found), indent=2))
    else:
        print(table(results, found), end="")
    return 0 if all(s.passed for s in found) else 1
