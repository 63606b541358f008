"""A process's custody of secrets it read from its environment to keep for itself (the model keys
Holon holds behind a run's key proxy): no process it starts inherits them, and no process of its
user (its agent) can read them out of it.

Light on purpose (ctypes and the hygiene helpers only): `holon action` calls it before it knows
whether any run will start.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, MutableMapping

from holon.agent.hygiene import make_non_dumpable


def hold_secrets(names: Iterable[str], environ: MutableMapping[str, str] = os.environ) -> None:
    """Take the variables `names` out of the process's environment, after wiping their values
    where the process was started with them (the block /proc/<pid>/environ shows, which dropping
    a variable leaves as it was), and make the process non-dumpable, which keeps its memory
    (/proc/<pid>/mem, ptrace) from its own user's processes. Nothing when none is set."""
    held = [name for name in dict.fromkeys(names) if name in environ]
    if not held:
        return
    if environ is os.environ:
        _wipe_environment_values(held)
    for name in held:
        environ.pop(name, None)
    make_non_dumpable()


def _wipe_environment_values(names: Iterable[str]) -> None:
    """Overwrite with NULs the values of `names` in the C environment (`environ`), in place."""
    if not sys.platform.startswith("linux"):
        return
    prefixes = [os.fsencode(name) + b"=" for name in names]
    try:
        entries = ctypes.POINTER(ctypes.c_void_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError, AttributeError):
        return
    index = 0
    while address := entries[index]:
        entry = ctypes.string_at(address)
        for prefix in prefixes:
            if entry.startswith(prefix):
                ctypes.memset(address + len(prefix), 0, len(entry) - len(prefix))
        index += 1
