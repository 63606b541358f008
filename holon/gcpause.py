"""The garbage collector paused while a command starts (`holon action`'s start-up).

Starting a command imports Holon's modules and builds their classes and pydantic models: objects
that live as long as the process, and almost no garbage. Collecting while they are made only
walks them again and again, and a pydantic model's validator is costly to walk: `holon action`
on `/holon help` spent about 150 ms of CPU (of about 530) in its start-up's 140-odd collections,
a full collection alone over 20 ms. So the process entry pauses collection and the command
resumes it when its start-up is done, with what start-up made frozen (`gc.freeze`): later
collections skip it. The price is the start-up's few unreachable objects (about 900 for
`holon action`), kept instead of collected. Only the process entry pauses
(`holon.cli.main.entry`), never a caller of `main()` in a longer-lived process.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collect again (a no-op unless `pause` disabled it)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


__all__ = ["pause", "resume"]
