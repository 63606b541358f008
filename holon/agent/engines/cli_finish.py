"""The result channel of the CLI engines: the CLI writes `finish.json` into the output directory.

A CLI has no `finish` tool and does not know the ids Holon gives the commands it records, so its
finish cites verification by command text: `verification_commands` is a list of strings, and each
is mapped to the id of the last recorded command run as exactly that text (see
`CliRecorder.command_id`). A cited command that was never recorded is left out, with a note:
the evidence, not the claim, decides.

The file is the CLI's, so it is read like any agent output: under the directory's fd, no symlink
followed, a regular file only, bounded.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from holon.agent.engine import Finish, FinishStatus, Question
from holon.agent.engines.cli_evidence import CliRecorder, one_line
from holon.errors import InvalidInput
from holon.fsutil import NotRegular, lstat_at, open_dir, read_regular_at, remove_at
from holon.jsonio import load_object
from holon.templating import render
from holon.validation import describe_validation_error

FINISH_FILE = "finish.json"
FINISH_LIMIT = 64 * 1024


class CliFinish(BaseModel):
    """What a CLI writes to `finish.json`: Finish, with verification cited by command text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: FinishStatus
    summary: str = Field(min_length=1, max_length=20000)
    verification_commands: list[str] = Field(default_factory=list, max_length=100)
    question: Question | None = None


def prompt(user: str, output: Path, system: str | None = None) -> str:
    """The prompt piped to the CLI: the compiled prompt (the system prompt first when the CLI
    has no flag for it) and the instruction to write `finish.json`."""
    return render(
        "holon.agent.engines",
        "cli_prompt.txt.j2",
        "text",
        system=system or "",
        user=user,
        finish_path=str(output / FINISH_FILE),
        limit_kib=FINISH_LIMIT // 1024,
    )


def clear(output: Path) -> None:
    """Remove a finish.json left from before the run, so only this run's can count."""
    fd = open_dir(output)
    try:
        if lstat_at(fd, FINISH_FILE) is not None:
            with contextlib.suppress(FileNotFoundError):
                remove_at(fd, FINISH_FILE)
    finally:
        os.close(fd)


def read(output: Path, evidence: CliRecorder) -> tuple[Finish | None, str | None]:
    """The CLI's finish as a Finish, or None and why not (one line)."""
    try:
        fd = open_dir(output)
    except OSError as exc:
        return None, f"the output directory is unreadable ({exc.strerror})"
    try:
        raw = read_regular_at(fd, FINISH_FILE, FINISH_LIMIT)
    except FileNotFoundError:
        return None, f"the CLI wrote no {FINISH_FILE}"
    except NotRegular as exc:
        return None, f"{FINISH_FILE} not read: {exc} (only a regular file counts)"
    except OSError as exc:
        return None, f"{FINISH_FILE} is unreadable ({exc.strerror})"
    finally:
        os.close(fd)
    try:
        cited = CliFinish.model_validate(load_object(raw, FINISH_FILE))
    except InvalidInput as exc:
        return None, one_line(str(exc))
    except ValidationError as exc:
        return None, one_line(describe_validation_error(FINISH_FILE, exc))
    verification: list[int] = []
    for text in cited.verification_commands:
        found = evidence.command_id(text)
        if found is None:
            evidence.note(f"{FINISH_FILE} cites a command that was not recorded: {one_line(text)}")
        elif found not in verification:
            verification.append(found)
    finish = Finish(
        status=cited.status,
        summary=cited.summary,
        verification=verification,
        question=cited.question,
    )
    return finish, None
