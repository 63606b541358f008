"""Where the traceback of an internal error goes: the one log every "internal error" line names.

`HOLON_LOG_DIR` (or the Actions runner's `RUNNER_TEMP`) first, then the user's cache directory,
then a per-user file in the temp directory, so a log can nearly always be written. Tracebacks
may quote input, so secret-looking words are masked before they are written.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path

from holon import __version__
from holon.secrets import mask_secret_looking

LOG_NAME = "holon-error.log"


def log_paths() -> list[Path]:
    """Where the traceback of an internal error goes, first choice first."""
    paths = []
    base = os.environ.get("HOLON_LOG_DIR") or os.environ.get("RUNNER_TEMP")
    if base:
        paths.append(Path(base) / LOG_NAME)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    paths.append(Path(cache) / "holon" / LOG_NAME)
    # Last resort, so an internal error always names a log: a per-user file in the temp dir.
    paths.append(Path(tempfile.gettempdir()) / f"holon-error-{os.getuid()}.log")
    return paths


def log_traceback(exc: BaseException) -> Path | None:
    """Append `exc`'s traceback to the first writable log; its path, or None if none was."""
    text = f"--- {datetime.now(UTC).isoformat()} holon {__version__} {sys.argv!r}\n"
    text += format_traceback(exc)
    for path in log_paths():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # O_NOFOLLOW: a planted link in a shared temp dir must not redirect the log.
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as log:
                log.write(text)
        except (OSError, ValueError):
            continue
        return path
    return None


def format_traceback(exc: BaseException) -> str:
    """The traceback with secret-looking words masked."""
    return mask_secret_looking("".join(traceback.format_exception(exc)))
