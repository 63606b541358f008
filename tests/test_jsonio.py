"""holon/jsonio.py: bounded reads, nesting by a linear scan, and the values JSON can spell that
Python (or UTF-8) cannot carry."""

from __future__ import annotations

import io
import json
import random
import re
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import IO, cast

import pytest

from holon import jsonio
from holon.errors import InvalidInput


class _Endless:
    """An endless stream of spaces that counts what was read from it."""

    def __init__(self) -> None:
        self.read_total = 0

    def read(self, size: int) -> bytes:
        self.read_total += size
        return b" " * size


def test_read_stream_stops_just_past_the_limit() -> None:
    stream = _Endless()
    with pytest.raises(InvalidInput, match="over the 1 MiB limit"):
        jsonio.read_stream(cast(IO[bytes], stream), 1024 * 1024, "standard input")
    assert stream.read_total == 1024 * 1024 + 1


def test_read_stream_returns_what_fits() -> None:
    assert jsonio.read_stream(io.BytesIO(b"x" * 10), 10, "s") == b"x" * 10


def test_read_path_of_dev_zero_stops_at_the_limit() -> None:
    with pytest.raises(InvalidInput, match="/dev/zero: over the 4096 bytes limit"):
        jsonio.read_path("/dev/zero", 4096)


def test_read_path_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="file not found"):
        jsonio.read_path(str(tmp_path / "nope.json"), 10)


def test_lines_skip_an_overlong_line_without_holding_it() -> None:
    long = b"[" + b"1," * 5000 + b"1]\n"
    stream = io.BufferedReader(io.BytesIO(b'{"a":1}\n' + long + b"{}\n" + b"tail"), 64)
    assert list(jsonio.lines(stream, 100)) == [b'{"a":1}\n', None, b"{}\n", b"tail"]


def test_lines_limit_counts_the_content_not_the_newline() -> None:
    stream = io.BytesIO(b"x" * 10 + b"\n" + b"y" * 11 + b"\n" + b"z" * 10)
    assert list(jsonio.lines(stream, 10)) == [b"x" * 10 + b"\n", None, b"z" * 10]


@pytest.mark.parametrize(
    ("depth", "ok"), [(1, True), (jsonio.MAX_DEPTH, True), (jsonio.MAX_DEPTH + 1, False)]
)
def test_depth_limit_is_exact(depth: int, ok: bool) -> None:
    raw = ("[" * depth + "]" * depth).encode()
    if ok:
        assert jsonio.loads(raw, "doc") is not None
    else:
        with pytest.raises(InvalidInput, match="doc: invalid JSON: nested too deeply"):
            jsonio.loads(raw, "doc")


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = '["' + "[{" * 10_000 + '\\"' + "]" * 5 + '", {"a\\\\": "}}"}]'
    assert jsonio.loads(text.encode(), "doc")[1] == {"a\\": "}}"}


def test_mixed_nesting_past_the_limit() -> None:
    raw = ('{"a":' * 60 + "[" * 60 + "1" + "]" * 60 + "}" * 60).encode()
    with pytest.raises(InvalidInput, match="nested too deeply"):
        jsonio.loads(raw, "doc")


def test_many_shallow_objects_pass() -> None:
    raw = json.dumps([{"a": [1, {"b": 2}]} for _ in range(10_000)]).encode()
    assert len(jsonio.loads(raw, "doc")) == 10_000


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"a": "\\ud800"}', "lone surrogate"),
        (b'{"\\udfff": 1}', "lone surrogate"),
        (b'["ok", ["\\uDBFF x"]]', "lone surrogate"),
        (b"[" + b"9" * 5000 + b"]", "invalid JSON: Exceeds the limit"),
        (b"[NaN]", "NaN is not a JSON number"),
        (b"[-Infinity]", "-Infinity is not a JSON number"),
        (b"[1e999]", "out of range"),
        (b"\xff{}", "not valid UTF-8 (byte 0)"),
        (b"{broken", "invalid JSON at line 1, column 2"),
    ],
    ids=[
        "surrogate",
        "surrogate-key",
        "surrogate-upper",
        "digits",
        "nan",
        "inf",
        "1e999",
        "utf8",
        "syntax",
    ],
)
def test_values_python_or_utf8_cannot_carry_are_refused(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        jsonio.loads(raw, "doc")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_surrogate_pair_is_a_real_character() -> None:
    assert jsonio.loads(b'"\\ud83d\\ude00"', "doc") == "\U0001f600"
    assert jsonio.loads(b'"\\\\ud800"', "doc") == "\\ud800"  # an escaped backslash, not an escape


def test_scrub_makes_any_text_encodable() -> None:
    text = jsonio.scrub("a\ud800b\udfff\U0001f600")
    assert text == "a\ufffdb\ufffd\U0001f600"
    text.encode("utf-8")
    assert jsonio.scrub("plain") == "plain"


def test_the_recursion_limit_is_far_above_max_depth() -> None:
    # check_depth is what stops deep documents; the parser's own guard is only a backstop.
    assert sys.getrecursionlimit() > 3 * jsonio.MAX_DEPTH


def test_read_path_of_a_directory_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="a directory, not a file"):
        jsonio.read_path(str(tmp_path), 4096)


# ------------------------------------------------ the fast paths decide exactly as before they did

_REF_STRING = re.compile(rb'"[^"]*"')
_REF_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')


def _reference_check_depth(raw: bytes, source: str, max_depth: int) -> None:
    """check_depth as it was before its fast paths: every string cut out by one regex."""
    if raw.count(b"{") + raw.count(b"[") <= max_depth:
        return
    structure = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _REF_NOT_STRUCTURE)
    brackets = _REF_STRING.sub(b"", structure).translate(bytes.maketrans(b"[]", b"{}"))
    for _ in range(max_depth):
        if not brackets:
            return
        shorter = brackets.replace(b"{}", b"")
        if len(shorter) == len(brackets):
            return
        brackets = shorter
    if brackets:
        raise InvalidInput(f"{source}: invalid JSON: nested too deeply (over {max_depth} levels)")


def _reference_loads(raw: bytes, source: str) -> object:
    """jsonio.loads as it was before its fast paths (json.loads with the hooks on every call)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{source}: not valid UTF-8 (byte {exc.start})") from None
    _reference_check_depth(raw, source, jsonio.MAX_DEPTH)
    try:
        value = json.loads(
            text,
            parse_float=jsonio._finite_float,
            parse_constant=jsonio._no_constant,
        )
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        ) from None
    except ValueError as exc:
        raise InvalidInput(f"{source}: invalid JSON: {str(exc).split(';')[0]}") from None
    if re.search(rb"\\u[dD][89a-fA-F]", raw) and jsonio._has_lone_surrogate(value):
        raise InvalidInput(f"{source}: invalid JSON: a string holds a lone surrogate escape")
    return value


def _outcome(load: Callable[[], object]) -> tuple[str, object]:
    try:
        return ("value", load())
    except InvalidInput as exc:
        return ("error", str(exc))


_DEEP = jsonio.MAX_DEPTH
_CRAFTED = [
    b"[1e999]",
    b"[-1e400]",
    b'{"a": 1E+999}',
    b"[1e-400, -0.0, 1.5, 2e10]",
    b"[NaN]",
    b"[Infinity]",
    b"[-Infinity]",
    b'{"n": NaN, "s": "x"}',
    b'["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "9e99999"]',
    b'{"1e999": "NaN", "Infinity": 1}',
    b"[" + b"9" * 5000 + b"]",
    b'["' + b"9" * 5000 + b'"]',
    b'"\\ud800"',
    b'{"\\udfff": 1}',
    b'"\\\\ud800"',
    b'"\\\\\\ud800"',
    b'"\\ud83d\\ude00"',
    b'["\\ud83d\\ude00", "\\uDBFF x"]',
    b"\xef\xbb\xbf{}",
    b"\xff{}",
    b"{broken",
    b"[1] x",
    b"",
    b" ",
    b"[" * _DEEP + b"]" * _DEEP,
    b"[" * (_DEEP + 1) + b"]" * (_DEEP + 1),
    b'{"a":' * _DEEP + b"1" + b"}" * _DEEP,
    b'{"a":' * (_DEEP + 1) + b"1" + b"}" * (_DEEP + 1),
    # GitHub's URL templates: brackets inside strings, next to deep and shallow nesting.
    b'{"u": "https://x/{/ref}", "v": ' * (_DEEP + 1) + b"1" + b"}" * (_DEEP + 1),
    b'{"u": "{archive_format}{/ref}", "v": ' * _DEEP + b"1" + b"}" * _DEEP,
    b'[{"u": "{{{{[[[["}' + b', {"u": "}}]]"}' * 200 + b"]",
    b'["[", "]", "{", "}", "", "", "[[", "\\"[", "\\\\", "]"]',
    b'{"a": "\\"{", "b": [' * (_DEEP + 1) + b"1" + b"]}" * (_DEEP + 1),
    # Malformed: odd quotes, unbalanced brackets, strings never closed.
    b'["[""{' * 60,
    b'["a""b"' + b"[" * 120,
    b'"' + b"[" * 120 + b'"' + b'"',
    b"]" * 60 + b"[" * 120,
    b'{"a": "' + b"{" * 200,
]


@pytest.mark.parametrize("raw", _CRAFTED, ids=range(len(_CRAFTED)))
def test_loads_decides_as_before_on_crafted_documents(raw: bytes) -> None:
    assert _outcome(lambda: jsonio.loads(raw, "doc")) == _outcome(
        lambda: _reference_loads(raw, "doc")
    )


def test_check_depth_decides_as_before_on_random_structure() -> None:
    rng = random.Random(13)  # noqa: S311 - a fixed seed for a reproducible spread of inputs
    alphabet = b'"[]{}\\a:,'
    for _ in range(20_000):
        raw = bytes(rng.choice(alphabet) for _ in range(rng.randrange(1, 60)))
        depth = rng.randrange(0, 6)
        got = _outcome(partial(jsonio.check_depth, raw, "doc", depth))
        want = _outcome(partial(_reference_check_depth, raw, "doc", depth))
        assert got == want, raw


def test_the_crafted_documents_cover_both_paths() -> None:
    # Strings with brackets (URL templates) past the bracket count take the quote pairing path;
    # a document with no backslash skips the escape handling and the surrogate pattern.
    refused = [raw for raw in _CRAFTED if _outcome(partial(jsonio.loads, raw, "d"))[0] == "error"]
    assert any(b"{/ref}" in raw for raw in refused)
    assert any(b"\\ud800" in raw for raw in refused)
    assert any(b"1e999" in raw for raw in refused)


def _members_agree(raw: bytes) -> bool:
    """load_members reads `raw` as loads does (None where loads refuses it or it is no object),
    and each member's text is that member's value. True when it gave the members."""
    found = jsonio.load_members(raw, "doc")
    kind, value = _outcome(lambda: jsonio.loads(raw, "doc"))
    if found is None:
        assert kind == "error" or not isinstance(value, dict), raw
        return False
    members, texts = found
    assert kind == "value", raw
    assert members == value, raw
    assert type(value) is dict
    assert list(members) == list(value)  # the same order as well
    assert texts.keys() == members.keys()
    for key, text in texts.items():
        assert json.loads(text) == members[key]
        assert text in raw.decode("utf-8")
    return True


_OBJECTS = [
    b"{}",
    b" \r\n{ }\t",
    b'{"a":1,"a":[2]}',
    b'{"a": "}", "b": {"c": ["]", "{"]}, "d": null}',
    b'{ "e" : "\\"}" , "f":true,"g":-1.5e3 }',
    b'{"s": "\\ud83d\\ude00", "t": "caf\xc3\xa9"}',
    b'{"a":1,}',
    b'{"a":1 "b":2}',
    b'{"a" 1}',
    b'{"a":',
    b'{"a":1}}',
    b'{"a":1} x',
    b"{a:1}",
    b'{"a":"\\ud800"}',
    b'{"\\udc00":1}',
    b'{"a":"\\u00e9\\ud83d"}',
    b'{"a":"\xff"}',
    b'{"a":"\x01"}',
    b'{"\x01":1}',
    b'{"a":1e999}',
    b'{"a":NaN}',
    b"\xef\xbb\xbf{}",
    b"[1]",
    b'"x"',
    b"",
    b'{"v": ' * (_DEEP - 1) + b"1" + b"}" * (_DEEP - 1),
    b'{"v": ' * (_DEEP + 1) + b"1" + b"}" * (_DEEP + 1),
]


@pytest.mark.parametrize("raw", _CRAFTED + _OBJECTS, ids=range(len(_CRAFTED + _OBJECTS)))
def test_load_members_reads_as_loads(raw: bytes) -> None:
    _members_agree(raw)


def test_load_members_reads_every_github_example_with_its_members_text() -> None:
    examples = json.loads(
        (Path(__file__).parent / "fixtures/octokit-webhooks/examples.json").read_text()
    )
    read = 0
    for group in examples:
        for payload in group["examples"]:
            line = {"event": group["name"], "delivery": "d", "payload": payload}
            for raw in (
                json.dumps(line).encode(),  # \\u escapes, surrogate pairs among them
                json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode(),
            ):
                read += _members_agree(raw)
    assert read > 600


def test_load_members_decides_as_loads_on_random_objects() -> None:
    rng = random.Random(29)  # noqa: S311 - a fixed seed for a reproducible spread of inputs
    parts = [b"{", b"}", b'"a"', b'"b\\""', b":", b",", b" ", b"1", b"[", b"]", b"null", b'"}"']
    given = 0
    for _ in range(20_000):
        raw = b"{" + b"".join(rng.choice(parts) for _ in range(rng.randrange(0, 14)))
        given += _members_agree(raw)
    assert given > 100  # the spread reaches well-formed objects too
