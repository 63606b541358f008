"""Forwarded secrets out of every file the agent left in its output directory.

The run's output directory is uploaded for whoever reads the run (the `holon-runs-*` artifact),
and the agent's own files there (its transcript, its commands' output) quote what the model and
its commands printed: a forwarded key the agent echoed, in plain or encoded (`base64`,
percent-encoded) form, would be published with them. Every regular file is rewritten with each
form of each value replaced by the marker (`holon.secrets.Redactor`); nothing is followed (a
symlink or special file is left as it is and never read). `diff.patch` is not rewritten: a
patch holding a secret is refused whole (`outputs.collect_patch`), never published edited.

Secret-looking words (a prefixed token such as `ghp_...`, a URL password, a word after `token` /
`Bearer`: `holon.secrets.mask_secret_looking`) are masked in the same pass: an agent that is not
Holon's own (any image) may echo a token it read in the issue it works on, and the run's output
must not publish it again. The prefixed tokens of the run's own input (its context and spec:
`context_tokens`) are known values, so they are redacted in every form, encoded ones too. Both
only in files of at most `WORDS_LIMIT` bytes.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from holon.contract.layout import PATCH_FILE
from holon.fsutil import place_at
from holon.secrets import SECRET_PREFIXES, Redactor, StreamRedactor, mask_secret_looking

_CHUNK = 1024 * 1024
_CONTEXT_FILE_LIMIT = 8 * 1024 * 1024  # larger context files are not read for tokens
# Larger output files are searched for the forwarded secrets only (a best effort bound: a
# gigabyte the agent wrote is not read again for the words of a public issue).
WORDS_LIMIT = 32 * 1024 * 1024
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    + "|".join(re.escape(p) for p in SECRET_PREFIXES)
    + r")[A-Za-z0-9_-]{6,}"
)


def context_tokens(context: Path | None, *texts: str) -> Redactor:
    """The prefixed tokens (`ghp_...`, `sk-...`) in the run's context directory (regular files,
    links not followed) and in `texts`: what the agent was shown and may say again."""
    found: set[str] = set()
    for text in texts:
        found.update(_TOKEN.findall(text))
    if context is not None:
        for top, _dirs, names in os.walk(context):
            for name in names:
                path = os.path.join(top, name)
                try:
                    st = os.lstat(path)
                    if not stat.S_ISREG(st.st_mode) or st.st_size > _CONTEXT_FILE_LIMIT:
                        continue
                    with open(path, "rb") as handle:
                        text = handle.read().decode("utf-8", "replace")
                except OSError:
                    continue
                found.update(_TOKEN.findall(text))
    return Redactor(sorted(found))


_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def _chunks(dir_fd: int, name: str) -> list[bytes] | None:
    try:
        fd = os.open(name, _OPEN | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        chunks = []
        while chunk := handle.read(_CHUNK):
            chunks.append(chunk)
        return chunks


def _mask_words(data: bytes) -> bytes:
    """`data` with its secret-looking words masked; every other byte as it was (latin-1 maps
    each byte to one character and back, and the patterns are ASCII)."""
    return mask_secret_looking(data.decode("latin-1")).encode("latin-1")


def _redact_file(dir_fd: int, name: str, redactor: Redactor, also: Redactor | None) -> int:
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    words = st.st_size <= WORDS_LIMIT
    if not redactor and not words:
        return 0
    chunks = _chunks(dir_fd, name)
    if chunks is None:
        return 0
    replaced = 0
    if redactor:
        stream = StreamRedactor(redactor)
        chunks = [*(stream.feed(chunk) for chunk in chunks), stream.flush()]
        replaced = stream.replaced
    changed = bool(replaced)
    if words:
        data = b"".join(chunks)
        masked = _mask_words(also.redact_bytes(data)[0] if also else data)
        changed = changed or masked != data
        chunks = [masked]
    if changed:
        place_at(dir_fd, name, chunks, stat.S_IMODE(st.st_mode) | stat.S_IRUSR | stat.S_IWUSR)
    return replaced


def redact_output_files(
    dir_fd: int, redactor: Redactor, *, also: Redactor | None = None, top: bool = True
) -> int:
    """Redact every regular file below `dir_fd` (not following links) of the forwarded secrets
    (`redactor`), of the values `also` holds and of secret-looking words; how many forwarded
    values were replaced."""
    replaced = 0
    for entry in sorted(os.listdir(dir_fd)):
        if top and entry == PATCH_FILE:
            continue
        try:
            st = os.stat(entry, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                sub = os.open(entry, _OPEN | os.O_DIRECTORY, dir_fd=dir_fd)
            except OSError:
                continue
            try:
                replaced += redact_output_files(sub, redactor, also=also, top=False)
            finally:
                os.close(sub)
        elif stat.S_ISREG(st.st_mode):
            try:
                replaced += _redact_file(dir_fd, entry, redactor, also)
            except OSError:
                continue
    return replaced
