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


@pytest.mark.parametrize("keep_reports", [False, True])
def test_a_replay_keeps_its_pass_reports_only_when_asked(
    tmp_path: Path, keep_reports: bool
) -> None:
    """A replay of a million events must not hold a million pass reports; `holon action`
    asks for its few (its step summary), and the closures answer either way."""
    example = Path(__file__).resolve().parents[2] / "examples" / "serve"
    options = ServeOptions(
        state_dir=tmp_path / "s",
        replay=[example / "replay.ndjson"],
        dry_run=True,
        once=True,
        keep_reports=keep_reports,
    )
    serve = Serve(options)
    serve.open()
    try:
        serve.run()
    finally:
        serve.close()
    assert serve.closures()
    assert bool(serve.reports) is keep_reports
