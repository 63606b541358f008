"""`holon run`: one Agent Contract run; exits with the contract's code (0/1/2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from holon import gcpause
from holon.cli._common import add_backend_arguments, backend_fields
from holon.errors import InvalidInput

# A run closes every file it writes, and joins its threads: the process may end without the
# interpreter's teardown (`holon.cli.main._exit`).
QUICK_EXIT = True
# The collector stays paused (holon/gcpause.py) through the imports, the spec's models and the
# snapshot, until the runner has loaded what judging the run needs, while the engine starts the
# agent (holon/runner/run.py); `main` resumes it whatever happens before that.
RESUMES_GC = True

if TYPE_CHECKING:
    from holon.runner import RunRequest, RunResult
    from holon.skills.catalog import Skill
    from holon.skills.config import RepoConfig


def configure(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", metavar="FILE", help="the run's spec.yaml")
    source.add_argument(
        "--bundle",
        metavar="DIR",
        help="a run bundle (fan-out's decide job: docs/fan-out.md): its spec, context, user"
        " prompt, skill and run id, instead of --spec, --context, --user-prompt and --skill",
    )
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="directory to snapshot (default: the spec's context.workspace, else the current dir)",
    )
    parser.add_argument("--output", required=True, metavar="DIR", help="empty or new directory")
    parser.add_argument("--context", metavar="DIR", help="files for /holon/input/context/")
    parser.add_argument(
        "--system-prompt", metavar="FILE", help="becomes /holon/input/prompts/system.md"
    )
    parser.add_argument(
        "--user-prompt", metavar="FILE", help="becomes /holon/input/prompts/user.md"
    )
    parser.add_argument(
        "--skill",
        action="append",
        default=[],
        metavar="REF",
        help="a skill the run uses: a built-in name or a folder holding SKILL.md (repeatable;"
        " beats the repository config, the spec's metadata.skills and the built-in skills)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the repository config (default: <workspace>/.holon/config.yaml when present)",
    )
    parser.add_argument(
        "--include-ignored", action="store_true", help="also copy files that git ignores"
    )
    parser.add_argument(
        "--keep-workspace", action="store_true", help="keep the snapshot after the run"
    )
    add_backend_arguments(parser)


# Prompts are text for a model; a few MiB is far more than any context window holds.
MAX_PROMPT_BYTES = 4 * 1024 * 1024


def _read_prompt(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    from holon import jsonio

    try:
        return jsonio.read_text(value, MAX_PROMPT_BYTES, "prompt")
    except InvalidInput as exc:
        raise InvalidInput(f"{flag}: {exc}") from None


def _skills(args: argparse.Namespace, spec_skills: list[str], workspace: Path) -> list[Skill]:
    """The run's skills: --skill > the repository config > the spec's metadata.skills > built in."""
    config: RepoConfig | None = None
    if args.config:  # checked even when no skill is used: a bad config is the caller's error
        from holon.skills.config import load_config

        config = load_config(Path(args.config))
    if not args.skill and not spec_skills:
        return []
    from holon.skills.catalog import default_catalog
    from holon.skills.config import repo_config
    from holon.skills.resolve import resolve_skills

    if not workspace.is_dir():
        raise InvalidInput(f"workspace is not a directory: {workspace}")
    if config is None:
        config = repo_config(workspace)
    return resolve_skills(args.skill, config, spec_skills, default_catalog(), repo=workspace)


def _bundle_request(args: argparse.Namespace) -> RunRequest:
    """The run a bundle describes, in the workspace given (default: the current directory,
    the run job's checkout)."""
    from holon.actions.run_bundle import read_bundle
    from holon.runner import RunRequest

    mixed = [f for f in ("context", "user_prompt", "system_prompt", "config") if getattr(args, f)]
    if mixed or args.skill:
        flag = "--" + (mixed[0].replace("_", "-") if mixed else "skill")
        raise InvalidInput(f"{flag} cannot be combined with --bundle: the bundle carries it")
    loaded = read_bundle(Path(args.bundle))
    bundle = loaded.bundle
    workspace = Path(args.workspace) if args.workspace is not None else Path.cwd()
    _check_start(workspace, bundle.base_sha)
    return RunRequest(
        spec=bundle.spec,
        skills=loaded.skills,
        workspace=workspace,
        output=Path(args.output),
        context=loaded.context,
        user_prompt=bundle.user_prompt,
        run_id=bundle.run,
        include_ignored=args.include_ignored,
        keep_workspace=args.keep_workspace,
        **backend_fields(args),
    )


def _check_start(workspace: Path, start: str | None) -> None:
    """A bundle names the commit its run starts from (a pull request's head, or the commit the
    decide job checked out); a git workspace at another commit is refused before the agent
    runs (settle would refuse its output: the patch is made against another tree). The
    commit the run did start from is recorded in run.json (`snapshot.head`)."""
    from holon.runner.git import git_ok

    if start is None or not workspace.is_dir():
        return
    safe = ["-c", f"safe.directory={workspace.resolve()}"]
    head = git_ok([*safe, "rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=workspace)
    if head and head != start:
        raise InvalidInput(
            f"the workspace is at {head[:40]}, not at {start}, the commit this bundle's run "
            "starts from: check that commit out (the matrix entry's ref)"
        )


def main(args: argparse.Namespace) -> int:
    from holon.errors import Interrupted

    try:
        return _main(args)
    except (Interrupted, KeyboardInterrupt):
        from holon.held_signals import forget_handled_interrupt

        forget_handled_interrupt()  # handled: `holon` exits 130, not by SIGINT
        raise
    finally:
        gcpause.resume()  # a no-op once the runner resumed it


def _main(args: argparse.Namespace) -> int:
    import time

    entered = time.time_ns()
    from holon.contract.spec import load_spec
    from holon.runner import RunRequest, run
    from holon.runner.timeline import mark

    mark("run command entered", entered)
    mark("imports done")

    if args.bundle is not None:
        return _report(args, run(_bundle_request(args)))
    spec_path = Path(args.spec)
    spec = load_spec(spec_path)
    mark("spec validated")
    if args.workspace is not None:
        workspace = Path(args.workspace)
    elif spec.context.workspace:
        workspace = spec_path.parent / spec.context.workspace
    else:
        workspace = Path.cwd()
    request = RunRequest(
        spec=spec,
        skills=_skills(args, spec.metadata.skills, workspace),
        workspace=workspace,
        output=Path(args.output),
        context=Path(args.context) if args.context else None,
        system_prompt=_read_prompt(args.system_prompt, "--system-prompt"),
        user_prompt=_read_prompt(args.user_prompt, "--user-prompt"),
        include_ignored=args.include_ignored,
        keep_workspace=args.keep_workspace,
        **backend_fields(args),
    )
    mark("request validated")
    return _report(args, run(request))


def _report(args: argparse.Namespace, result: RunResult) -> int:
    if args.json:
        from holon.cli._io import print_json

        print_json(result.model_dump_json(indent=2))
    else:
        from holon.cli.report import describe_run

        print(describe_run(result))
    sys.stdout.flush()
    from holon.runner.timeline import mark

    mark("reported")
    return int(result.exit_code)
