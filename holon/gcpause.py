"""The garbage collector paused while a command starts (`holon action`'s start-up).

Starting a command imports Holon's modules and builds their classes and pydantic models:
hundreds of thousands of objects that live as long as the process, and no garbage. Collecting
while they are made only walks them again and again (about 35 ms of `holon action`'s start-up,
over a tenth of it). So the process entry pauses collection, and the command resumes it when its
start-up is done: with the objects made so far frozen (`gc.freeze`), so later collections skip
them. Only the process entry pauses (`holon.cli.main.entry`), never a caller of `main()` in a
longer-lived process, which keeps its collector as it was.
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
