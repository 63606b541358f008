"""Workflow commands and GITHUB_OUTPUT records: what Actions reads back is exactly what was meant,
whatever untrusted text went in (a title with a newline and `::`, a value naming a delimiter)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from holon.actions.commands import (
    CommandError,
    command,
    escape_data,
    key_value,
    mask,
)
from holon.actions.files import CUT_NOTE, SUMMARY_LIMIT, append_summary, write_outputs


def read_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: `name<<DELIM` records (and `name=value` lines)."""
    found: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line:
            name, mark = line.split("<<", 1)
            end = lines.index(mark, i + 1)
            found[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            found[name] = value
            i += 1
        else:
            i += 1
    return found


def unescape(text: str) -> str:
    return text.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")


@given(st.text())
def test_a_commands_message_stays_on_its_line_and_reads_back(message: str) -> None:
    line = command("notice", message, {"title": message})
    assert "\n" not in line
    assert "\r" not in line
    _head, _, data = line.partition("::notice title=")[2].partition("::")
    assert unescape(data) == message


def test_hostile_text_cannot_start_another_command() -> None:
    title = "Crash\n::add-mask::x\r\n::error::forged"
    line = command("warning", title, {"title": "a:b,c"})
    assert line == ("::warning title=a%3Ab%2Cc::Crash%0A::add-mask::x%0D%0A::error::forged")
    assert escape_data("100%") == "100%25"


@pytest.mark.parametrize(("name", "props"), [("Not-A-Command", None), ("notice", {"bad key": "v"})])
def test_bad_names_are_refused(name: str, props: dict[str, str] | None) -> None:
    with pytest.raises(CommandError):
        command(name, "m", props)


def test_a_multi_line_secret_is_masked_line_by_line() -> None:
    assert mask("line-one\n\nline-two") == ["::add-mask::line-one", "::add-mask::line-two"]


@given(st.text().filter(lambda v: "\r" not in v))
def test_any_output_value_reads_back_exactly(value: str) -> None:
    assert read_outputs(key_value("handoff", value)) == {"handoff": value}


def test_a_value_holding_its_delimiter_is_refused() -> None:
    with pytest.raises(CommandError, match="contains its delimiter"):
        key_value("runs", "x\nghadelimiter_fixed\ny", delimiter=lambda: "ghadelimiter_fixed")
    with pytest.raises(CommandError, match="not an output name"):
        key_value("bad\nname", "v")
    assert re.fullmatch(r"ghadelimiter_[0-9a-f-]{36}", key_value("a", "b").split("<<")[1][:49])


def test_outputs_are_appended_as_records(tmp_path: Path) -> None:
    out = tmp_path / "output"
    out.write_text("earlier=1\n")
    env = {"GITHUB_OUTPUT": str(out)}
    write_outputs(env, {"closure_outcome": "completed", "waiting_reason": "", "runs": "[\n1\n]"})
    assert read_outputs(out.read_text()) == {
        "earlier": "1",
        "closure_outcome": "completed",
        "waiting_reason": "",
        "runs": "[\n1\n]",
    }


def test_the_step_summary_stays_under_one_mebibyte(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    assert append_summary(env, "# Holon\n")
    # Multi-byte characters straddle the cut: what is kept is still valid UTF-8.
    assert not append_summary(env, "é" * SUMMARY_LIMIT)
    data = summary.read_bytes()
    assert len(data) <= SUMMARY_LIMIT
    text = data.decode("utf-8")
    assert text.startswith("# Holon\n")
    assert text.endswith(CUT_NOTE)
    assert not append_summary(env, "more")  # no room left: nothing added
    assert summary.read_bytes() == data
    assert append_summary({}, "no summary file: nothing written")
