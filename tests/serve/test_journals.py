"""Serve's journals keep every rotated segment unless the operator bounds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from holon.serve.serve import Serve, ServeOptions


@pytest.mark.parametrize("keep", [None, 3])
def test_journal_keep_reaches_every_journal(tmp_path: Path, keep: int | None) -> None:
    serve = Serve(
        ServeOptions(state_dir=tmp_path / "s", dry_run=True, once=True, journal_keep=keep)
    )
    controller = serve.open()
    try:
        journals = controller.journals
        assert [j.keep for j in (journals.events, journals.decisions, journals.actions)] == [
            keep
        ] * 3
    finally:
        serve.close()
