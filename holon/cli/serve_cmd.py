"""`holon serve`: the proactive loop; `holon serve status|pause|resume` operate it."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from holon.cli._common import agent_argv, duration_seconds, env_values, secrets_from_env
from holon.crashpoints import CRASH_ENV, hook_of
from holon.errors import InvalidInput, Unavailable

__all__ = ["CRASH_ENV", "crash_hook"]


def crash_hook(environ: Mapping[str, str]) -> Callable[[str], None]:
    """The controller's crash hook: SIGKILL at the write point CRASH_ENV names, else nothing
    (holon/crashpoints.py)."""
    return hook_of(environ) or _pass


def _pass(name: str) -> None:
    """No crash hook asked for."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", nargs="?", choices=["status", "pause", "resume"], help="operate a serve"
    )
    parser.add_argument("--state-dir", required=True, metavar="D", help="state and journals")
    parser.add_argument("--workspace", metavar="D", help="repository skill runs work on")
    parser.add_argument(
        "--runs-dir", metavar="D", help="skill-run outputs (default: STATE_DIR.runs beside it)"
    )
    parser.add_argument(
        "--replay", metavar="PATH", action="append", default=[], help="replay file or directory"
    )
    parser.add_argument("--listen", metavar="127.0.0.1:PORT", help="loopback webhook receiver")
    parser.add_argument(
        "--secret-env", metavar="VAR", action="append", default=[], help="webhook secret variable"
    )
    parser.add_argument("--tick-interval", metavar="DUR", help="emit timer.tick this often")
    parser.add_argument("--policy", metavar="F", help="policy file (default: built-in)")
    parser.add_argument("--facts", metavar="F", help="repository facts (JSON) for offline runs")
    parser.add_argument(
        "--repo",
        metavar="OWNER/NAME",
        help="the repository served: of timer ticks; events of others get no work",
    )
    parser.add_argument("--dry-run", action="store_true", help="journal effects, perform none")
    parser.add_argument("--once", action="store_true", help="process what is there, then exit")
    parser.add_argument("--runtime", default="local", help="skill runs: local (default) or docker")
    parser.add_argument("--agent", metavar="CMD", help="agent command for skill runs")
    parser.add_argument("--image", help="agent image for skill runs (docker)")
    parser.add_argument(
        "--agent-env",
        metavar="NAME=VALUE",
        action="append",
        default=[],
        help="a non-secret setting for every skill run's agent, e.g. HOLON_ENGINE=replay "
        "(repeatable; in the run's spec)",
    )
    parser.add_argument(
        "--agent-secret",
        metavar="NAME",
        action="append",
        default=[],
        help="forward environment variable NAME to every skill run's agent as a secret, e.g. "
        "ANTHROPIC_API_KEY (repeatable; never recorded or printed)",
    )
    parser.add_argument("--checkpoint-every", type=int, default=1000, metavar="N")
    parser.add_argument("--reason", default="", help="pause: why")
    parser.add_argument("--json", action="store_true", help="status: print JSON")


def _listen(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    # ASCII digits only, and few of them: int() of thousands of digits is an error of its own.
    if not host or not port.isascii() or not port.isdigit() or len(port) > 5:
        raise InvalidInput(f"--listen {value[:60]!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    return host, int(port)


def _facts(path: str | None, login: str | None = None) -> Any:
    """`--facts F` (offline runs); none given: nothing known but Holon's own login."""
    from holon.controller.facts import PullFacts, StaticFacts

    if path is None:
        return StaticFacts(holon_login=login)
    from holon import jsonio
    from holon.cli._io import MAX_DOCUMENT_BYTES

    data = jsonio.load_object(jsonio.read_path(path, MAX_DOCUMENT_BYTES), f"--facts {path}")
    try:
        permissions = {
            (repo, login): level
            for repo, users in data.get("permissions", {}).items()
            for login, level in users.items()
        }
        pulls = {}
        for ref, fields in data.get("pulls", {}).items():
            repo, _, number = ref.rpartition("#")
            pulls[(repo, int(number))] = PullFacts(**fields)
        green = {}
        for ref, value in data.get("green", {}).items():
            repo, _, sha = ref.rpartition("@")
            green[(repo, sha)] = bool(value)
    except (ValueError, TypeError, AttributeError) as exc:
        raise InvalidInput(f"--facts {path}: {exc.__class__.__name__}: {exc}") from None
    return StaticFacts(permissions=permissions, pulls=pulls, green=green, holon_login=login)


def _state_dir_or_empty(directory: str) -> None:
    """InvalidInput unless `directory` holds a serve's state (state.json or state.lock) or is
    empty (a state directory no serve has written yet): `--state-dir /proc` is no state."""
    from holon.serve.inbox import INBOX_FILE
    from holon.state.store import LOCK, STATE

    try:
        with os.scandir(directory) as entries:
            names = {entry.name for entry in entries}
    except OSError as exc:
        raise InvalidInput(f"no serve state at {directory}: {exc.strerror or exc}") from None
    if names and not names & {STATE, LOCK, INBOX_FILE}:
        raise InvalidInput(
            f"no serve state at {directory}: it holds other files but no {STATE}, {LOCK} "
            f"or {INBOX_FILE}"
        )


def _operate(args: argparse.Namespace) -> int:
    from holon.cli._io import print_json
    from holon.controller.loop import pause_record
    from holon.serve.status import describe_status, status_of
    from holon.state.store import StateStore

    store = StateStore(Path(args.state_dir))
    if args.action == "status":
        try:
            is_dir = stat.S_ISDIR(os.stat(args.state_dir).st_mode)
        except OSError as exc:  # missing, or not searchable by this user
            raise InvalidInput(f"no serve state at {args.state_dir}: {exc.strerror}") from exc
        if not is_dir:
            raise InvalidInput(f"no serve state at {args.state_dir}: not a directory")
        _state_dir_or_empty(args.state_dir)
        from holon.serve.inbox import pending_count

        waiting = pending_count(Path(args.state_dir))
        status = status_of(store.load(), running=store.is_locked(), accepted_waiting=waiting)
        if args.json:
            print_json(json.dumps(status, indent=2, default=str))
        else:
            print(describe_status(status))
        return 0
    from holon.jsonio import scrub

    # Recorded in the state and journals: a user name that is not UTF-8 is kept readable.
    by = scrub(os.environ.get("USER") or "operator")
    command = {
        "command": args.action,
        "by": by,
        "reason": args.reason,
        "at": datetime.now(UTC).isoformat(),
    }
    if store.is_locked():
        # A serve is running: it reads the inbox between events.
        path = store.post_control(command)
        for _ in range(200):
            if not path.exists():
                print(f"{args.action}: applied by the running serve")
                return 0
            time.sleep(0.05)
        print(f"{args.action}: queued for the running serve ({path.name})")
        return 0
    with store:
        state = store.load()
        at = datetime.fromisoformat(command["at"])
        paused = args.action == "pause"
        state.put(pause_record(paused=paused, by=by, reason=args.reason, at=at, writer="cli"))
        store.save(state)
    print(f"{args.action}: recorded; kept events are decided when serve next starts")
    return 0


def main(args: argparse.Namespace) -> int:
    if args.action is not None:
        return _operate(args)
    from holon.serve.report import describe_run
    from holon.serve.serve import ServeOptions, install_signal_handlers

    secrets = env_values(args.secret_env)
    listen = _listen(args.listen) if args.listen else None
    if listen is not None and not secrets:
        raise InvalidInput("--listen needs --secret-env VAR: unsigned deliveries are refused")
    tick = duration_seconds(args.tick_interval, "--tick-interval")
    options = ServeOptions(
        state_dir=Path(args.state_dir),
        workspace=Path(args.workspace) if args.workspace else None,
        runs_dir=Path(args.runs_dir) if args.runs_dir else None,
        replay=[Path(p) for p in args.replay],
        listen=listen,
        secrets=secrets,
        tick_interval=tick,
        policy=Path(args.policy) if args.policy else None,
        dry_run=args.dry_run,
        once=args.once,
        runtime=args.runtime,
        agent=agent_argv(args.agent),
        image=args.image,
        agent_env=agent_env(args.agent_env),
        agent_secrets=secrets_from_env(args.agent_secret, "--agent-secret"),
        checkpoint_every=args.checkpoint_every,
        repo=args.repo,
        listening=listen is not None,
    )
    if options.agent_secrets:
        # Read: the model keys are this process's from here on, for its runs' key proxies (given
        # to each run explicitly, never inherited), and not readable by its agents (as `holon
        # run` and `holon action` hold them: docs/security.md "The model key").
        from holon.runner.model_keys import hold_model_keys

        hold_model_keys()
    from holon.crashpoints import arm
    from holon.serve.build import build_serve

    serve = build_serve(
        options,
        os.environ,
        offline_facts=lambda login: _facts(args.facts, login),
        prefer_offline_facts=bool(args.facts),  # `--facts F` wins: an offline rehearsal
        crashpoint=arm(os.environ),  # also GitHub's, state's, journals' points
        report=_print_error,
    )
    serve.open()
    install_signal_handlers(serve)
    listener = None
    try:
        if listen is not None:
            from holon.serve.listener import WebhookListener

            assert serve.inbox is not None
            try:
                listener = WebhookListener(
                    listen[0], listen[1], secrets, serve.inbox.offer, on_error=_print_error
                )
                host, port = listener.start()
            except ValueError as exc:  # not loopback, port out of range
                raise InvalidInput(f"--listen {args.listen}: {exc}") from None
            except OSError as exc:  # the port is taken, the address is not here
                raise Unavailable(
                    f"--listen {args.listen}: cannot listen: {exc.strerror or exc}"
                ) from None
            shown = f"[{host}]" if ":" in host else host  # an IPv6 address needs its brackets
            print(f"listening on http://{shown}:{port}/webhook", flush=True)
        code = serve.run()
    finally:
        if listener is not None:
            listener.stop()  # requests in flight finish: each is kept, or was never answered 202
        serve.close()
    # A serve stopped by a signal exits 0 (the operator asked); one that ran out of input by
    # itself (--once, or a replay with nothing else to serve) exits with its closures' code.
    code = 0 if serve.stopping.is_set() else code
    for line in describe_run(serve, code):
        print(line)
    return code


def agent_env(pairs: list[str]) -> dict[str, str]:
    """`--agent-env NAME=VALUE` pairs, held to the spec's rules for its env (a valid name, no
    secret-looking value: secrets go through --agent-secret); one line naming the problem."""
    from pydantic import ValidationError

    from holon.contract.spec import Context

    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise InvalidInput(f"--agent-env {name[:100]!r}: expected NAME=VALUE")
        env[name] = value
    try:
        Context(env=env)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        raise InvalidInput(f"--agent-env: {first['msg'].removeprefix('Value error, ')}") from None
    return env


_STDERR_LOCK = threading.Lock()


def _print_error(text: str) -> None:
    """One whole line per write, under a lock: the receiver's threads report concurrently, and
    print() writes the text and its newline separately, so their lines tore into each other."""
    from holon.terminal import line

    with _STDERR_LOCK:
        sys.stderr.write(line(text) + "\n")
        sys.stderr.flush()
