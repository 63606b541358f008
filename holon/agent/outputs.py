"""The agent's own files in the output directory: `manifest.json` (always, last), `summary.md`,
and the traceback of a crash (`evidence/agent-error.log`).

The model's shell can write into the output directory, so every name is looked up under the
directory's fd, written whole under a temporary name and renamed over whatever the model left
there (a link is replaced, never followed).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from holon.agent.files import open_dir, replace_at
from holon.agent.recorder import EVIDENCE_DIR
from holon.contract.layout import MANIFEST_FILE
from holon.contract.manifest import Manifest
from holon.fsutil import lstat_at, open_regular_at

SUMMARY_FILE = "summary.md"
ERROR_LOG = "agent-error.log"
PROBE_FILE = ".holon-probe"


class Outputs:
    def __init__(self, path: Path, mask: Callable[[str], str]) -> None:
        self.path = path
        self.fd = open_dir(path)
        self._mask = mask
        self.manifest_written = False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def writable(self) -> str | None:
        """None when a file can be made in the output directory, else why not."""
        try:
            replace_at(self.fd, PROBE_FILE, b"probe\n", sync=False)
            os.unlink(PROBE_FILE, dir_fd=self.fd)
        except OSError as exc:
            return f"the output directory {self.path} is not writable ({exc.strerror or exc})"
        return None

    def write_manifest(self, manifest: Manifest) -> None:
        """The manifest, its free text masked (known secret values, secret-looking words)."""
        update: dict[str, object] = {}
        if manifest.error is not None:
            update["error"] = self._mask(manifest.error)
        if manifest.question is not None:
            update["question"] = manifest.question.model_copy(
                update={"text": self._mask(manifest.question.text)}
            )
        masked = manifest.model_copy(update=update)
        data = masked.model_dump_json(indent=2, exclude_none=True) + "\n"
        replace_at(self.fd, MANIFEST_FILE, data.encode("utf-8"))
        self.manifest_written = True

    def write_summary(self, text: str) -> None:
        replace_at(self.fd, SUMMARY_FILE, self._mask(text).encode("utf-8"))

    def log_error(self, text: str) -> Path | None:
        """Append a (masked) traceback to evidence/agent-error.log; its path, or None."""
        st = lstat_at(self.fd, EVIDENCE_DIR)
        try:
            if st is None:
                os.mkdir(EVIDENCE_DIR, 0o755, dir_fd=self.fd)
            elif not stat.S_ISDIR(st.st_mode):
                return None
            evidence = os.open(
                EVIDENCE_DIR, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=self.fd
            )
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = os.open(ERROR_LOG, flags, 0o644, dir_fd=evidence)
                with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as log:
                    log.write(self._mask(text))
            finally:
                os.close(evidence)
        except OSError:
            return None
        return self.path / EVIDENCE_DIR / ERROR_LOG

    def present(self, paths: list[str]) -> list[str]:
        """Those of `paths` that are regular files in the output, reached without a link."""
        found = []
        for rel in paths:
            try:
                os.close(open_regular_at(self.fd, rel))
            except OSError:
                continue
            found.append(rel)
        return found
