"""`holon` entry point: parse, dispatch to one lazily imported command, map errors to exit codes.

Exit codes follow docs/cli.md ("Exit codes"): expected failures print one line; an unexpected
exception prints one line naming the log file that holds its traceback (exit 70, always with a log);
a failed git or filesystem step exits 74; Ctrl-C exits 130; usage errors exit 64 instead of
argparse's 2, which the Agent Contract reserves for "needs human"; a reader that closed the pipe
(`holon serve status | head -1`) ends the command quietly with 141, as SIGPIPE would.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn, Protocol, cast

from holon import __version__, gcpause
from holon.errorlog import format_traceback, log_traceback
from holon.errors import HolonError
from holon.jsonio import scrub
from holon.terminal import line

EXIT_USAGE = 64
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE

# name -> (module, one-line help). Modules are imported only when their command runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("holon.cli.run_cmd", "run one agent under the Agent Contract"),
    "probe": ("holon.cli.probe_cmd", "check that an agent is ready (runs it with --probe)"),
    "agent": ("holon.cli.agent_cmd", "be the agent: read the inputs, run an engine, write outputs"),
    "closure": ("holon.cli.closure_cmd", "derive a closure from runtime evidence"),
    "lifecycle": ("holon.cli.lifecycle_cmd", "normalize a lifecycle outcome"),
    "handoff": ("holon.cli.handoff_cmd", "render the structured handoff of a closure"),
    "gateway": ("holon.cli.gateway_cmd", "normalize an event into an EventEnvelope"),
    "serve": ("holon.cli.serve_cmd", "run the proactive loop; status, pause, resume"),
    "skills": ("holon.cli.skills_cmd", "list the skills and what they declare"),
    "context": ("holon.cli.context_cmd", "collect a run's context from an event payload"),
    "action": (
        "holon.cli.action_cmd",
        "one GitHub Actions step: the event, decided, done, settled",
    ),
    "eval": ("holon.cli.eval_cmd", "score the deciders on a corpus of decision scenarios"),
    "report": (
        "holon.cli.report_cmd",
        "runs, closures, pull requests and spend per skill and week",
    ),
}


class Command(Protocol):
    # A command whose start-up goes on inside `main` sets `RESUMES_GC = True` and resumes the
    # collector itself when it is done (`holon.gcpause`); any other resumes it before `main`.
    # A command that leaves nothing for the interpreter's teardown to do (every file it wrote
    # closed) sets `QUICK_EXIT = True`: the process entry then skips the teardown (`_exit`).
    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def main(self, args: argparse.Namespace) -> int: ...


class UsageError(HolonError):
    exit_code = EXIT_USAGE


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: {message}")


def _report_internal(exc: BaseException) -> int:
    path = log_traceback(exc)
    if path is not None:
        print(
            f"holon: internal error: {exc.__class__.__name__}; traceback in {path}", file=sys.stderr
        )
        return EXIT_INTERNAL
    # No log could be written anywhere: the traceback itself is the only record left.
    print(format_traceback(exc), file=sys.stderr, end="")
    print(f"holon: internal error: {exc.__class__.__name__}; no log writable", file=sys.stderr)
    return EXIT_INTERNAL


def _pipe_closed() -> int:
    # Whoever reads our output has gone; anything still buffered would only raise again at exit.
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def _undecodable(args: list[str]) -> UsageError | None:
    """The refusal of the first argument that is not UTF-8, naming its flag; None if all are.

    Python hands such bytes over as lone surrogates (`\\xff` becomes `\\udcff`). Holon records
    its arguments (delivery ids, reasons, paths) as JSON text, which cannot hold them, so they
    are refused here, before anything runs, instead of failing mid-command.
    """
    for index, arg in enumerate(args):
        if arg.isascii() or scrub(arg) == arg:
            continue
        flag, eq, value = arg.partition("=")
        previous = args[index - 1] if index else ""
        if arg.startswith("--") and eq and scrub(flag) == flag:
            where, arg = flag, value
        elif previous.startswith("-") and len(previous) > 1 and scrub(previous) == previous:
            where = previous
        else:
            where = f"argument {index + 1}"
        try:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate no byte decodes to (given from Python)
            shown = arg.encode("utf-8", "backslashreplace").decode("ascii")
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return UsageError(
            f"{where}: '{shown}' is not valid UTF-8; Holon records its arguments as UTF-8 text"
        )
    return None


def build_parser(command: str | None) -> Parser:
    parser = Parser(
        prog="holon", description="Holon: honest autonomous agent work for repositories."
    )
    parser.add_argument("--version", action="version", version=f"holon {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    # A command named on the line gets its own parser only: the others' are for `holon --help`
    # and for refusing a name that is none of them (building them all costs `holon run` ~2 ms).
    for name, (module, help_text) in COMMANDS.items():
        if command is not None and name != command:
            continue
        child = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            cast(Command, importlib.import_module(module)).configure(child)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Holon's models need no pydantic plugins; discovering them scans every installed
    # distribution's entry points, a visible share of a short command's start-up.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # Outside text may carry lone surrogates (JSON allows "\ud800") that UTF-8 cannot encode:
    # printed escaped, visibly, instead of failing mid-output.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    args_list = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in args_list if not a.startswith("-")), None)
    try:
        refusal = _undecodable(args_list)
        if refusal is not None:
            raise refusal
        parser = build_parser(chosen if chosen in COMMANDS else None)
        args = parser.parse_args(args_list)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        module = cast(Command, importlib.import_module(COMMANDS[args.command][0]))
        global _quick_exit
        _quick_exit = bool(getattr(module, "QUICK_EXIT", False))
        if not getattr(module, "RESUMES_GC", False):
            gcpause.resume()
        return module.main(args)
    except BrokenPipeError:
        return _pipe_closed()
    except HolonError as exc:
        if exc.exit_code == EXIT_INTERNAL:
            return _report_internal(exc)
        # One line whatever the message quotes (a path, a flag's value, a payload's field).
        print(f"holon: error: {line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("holon: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # --help and --version exit 0 through argparse
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        return _report_internal(exc)


_quick_exit = False  # set by `main` from the command's `QUICK_EXIT`


def _exit(code: int) -> NoReturn:
    """`sys.exit(code)`, or for a command that asked for it (`QUICK_EXIT`) the same exit
    without the interpreter's teardown: freeing every module and object of a process that is
    about to end costs a short `holon run` about 15 ms after its work is done. What the
    teardown would still do that matters is done first: the `atexit` functions run and the
    standard streams are flushed; a thread that is not a daemon and still runs gets the
    ordinary exit, which waits for it."""
    if not _quick_exit:
        sys.exit(code)
    import atexit
    import threading

    if any(
        thread.is_alive() and not thread.daemon and thread is not threading.main_thread()
        for thread in threading.enumerate()
    ):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            code = _pipe_closed() if stream is sys.stdout else code
        except (OSError, ValueError):
            pass
    os._exit(code)


def _terminate(signum: int, frame: object) -> None:
    # A cancelled CI job sends SIGTERM: unwind like Ctrl-C so agents and containers are
    # stopped and the run record is written, instead of dying mid-run.
    raise KeyboardInterrupt


_PLUGIN_LOADER = "pydantic.plugin._loader"
_PLUGINS_OFF = ("__all__", "1", "true")  # what pydantic's get_plugins takes for "disabled"


def _plugins_unlooked() -> None:
    """pydantic's plugin loader replaced, while plugins are disabled, by its one answer: none.

    pydantic imports its loader at its first model, and the loader imports `importlib.metadata`
    (with `email`, `zipfile`, `csv`: about 18 ms of CPU before `holon run` can start its agent)
    only to look for plugins, which Holon disables (`PYDANTIC_DISABLE_PLUGINS`, `main`). The
    stand-in answers `get_plugins()` as the loader does when they are disabled, and hands every
    other question (plugins enabled after all, any other name) to the real loader, imported then.
    """
    if _PLUGIN_LOADER in sys.modules:
        return
    import types

    stand_in = types.ModuleType(_PLUGIN_LOADER)

    def real() -> types.ModuleType:
        if sys.modules.get(_PLUGIN_LOADER) is stand_in:
            del sys.modules[_PLUGIN_LOADER]
        return importlib.import_module(_PLUGIN_LOADER)

    def get_plugins() -> object:
        if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in _PLUGINS_OFF:
            return ()
        return real().get_plugins()

    def other(name: str) -> object:
        if name.startswith("__"):  # the import system's questions (`__path__`): a plain module
            raise AttributeError(name)
        return getattr(real(), name)

    stand_in.get_plugins = get_plugins  # type: ignore[attr-defined]
    stand_in.__getattr__ = other  # type: ignore[method-assign]
    sys.modules[_PLUGIN_LOADER] = stand_in


def entry() -> NoReturn:
    signal.signal(signal.SIGTERM, _terminate)
    gcpause.pause()  # until the command's start-up is done (holon/gcpause.py)
    _plugins_unlooked()
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        code = _pipe_closed()
    _exit(code)
