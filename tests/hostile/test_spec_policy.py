"""Hostile corpus: YAML a user wrote (a run's spec, a serve policy) with values Holon cannot use.

PyYAML and the models let these through to exit 70 or to a silent surprise: an integer of 5000
digits (ValueError: int digits limit), an environment value holding NUL (ValueError when the agent
is started), `timeout: .nan` or `.inf` (no timeout at all under the local runtime, exit 70 under
docker), a date out of Python's range, a key given twice (the last silently won), aliases that
expand to a billion nodes. Each is now refused while loading or validating, in one line naming
where (exit 64), before anything runs (holon/yamlio.py, holon/contract/spec.py,
holon/duration.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from holon.cli import main as cli
from holon.contract.spec import parse_spec
from holon.controller.policy import parse_policy
from holon.errors import InvalidInput

HEAD = "version: v1\nkind: Holon\nmetadata:\n  name: hostile\ngoal:\n  description: audit\n"
BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)

# Each row: the spec text and the line `holon run` must refuse it with.
SPECS = {
    "timeout-5000-digits": (
        HEAD + "constraints:\n  timeout: " + "9" * 5000 + "\n",
        "line 8, column 12: integer too long (over 4300 digits)",
    ),
    "timeout-400-digits": (
        HEAD + "constraints:\n  timeout: " + "9" * 400 + "\n",
        "constraints.timeout: invalid duration (a number too large): at most 365d",
    ),
    "timeout-nan": (
        HEAD + "constraints:\n  timeout: .nan\n",
        "constraints.timeout: invalid duration nan: not a finite number",
    ),
    "timeout-inf": (
        HEAD + "constraints:\n  timeout: .inf\n",
        "constraints.timeout: invalid duration inf: not a finite number",
    ),
    "timeout-over-a-year": (
        HEAD + "constraints:\n  timeout: 99999999999h\n",
        "constraints.timeout: invalid duration '99999999999h': at most 365d",
    ),
    "env-nul": (
        HEAD + 'context:\n  env:\n    A: "x\\0y"\n',
        "context.env: A: an environment value cannot hold a NUL character",
    ),
    "duplicate-top-level-key": (
        HEAD + "goal:\n  description: another goal\n",
        "line 7, column 1: found duplicate key 'goal'",
    ),
    "duplicate-nested-key": (
        HEAD + "constraints:\n  timeout: 1m\n  timeout: 10h\n",
        "line 9, column 3: found duplicate key 'timeout'",
    ),
    "date-year-0": (
        HEAD.replace("hostile", "0000-01-01"),
        "line 4, column 9: date or time out of range",
    ),
    "lone-surrogate": (
        HEAD.replace("hostile", '"\\ud800"'),
        "line 4, column 9: a string holds a lone surrogate escape",
    ),
    "billion-laughs": (
        HEAD + "a: &a [x, x, x, x, x, x, x, x, x]\n" + BOMB,
        "aliases expand past 1000000 nodes",
    ),
    "recursive-alias": (
        HEAD.replace("  name: hostile\n", "  skills: &s [a, *s]\n"),
        "an alias refers to a node that contains it",
    ),
}


@pytest.mark.parametrize("case", sorted(SPECS))
def test_run_refuses_the_spec_before_anything_runs(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = SPECS[case]
    monkeypatch.setenv("HOLON_LOG_DIR", str(tmp_path / "logs"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    (tmp_path / "ws").mkdir()
    mark = tmp_path / "ran"
    agent = f"{sys.executable} -c \"open({str(mark)!r}, 'w')\""
    code = cli.main(
        [
            *("run", "--spec", str(spec), "--workspace", str(tmp_path / "ws")),
            *("--output", str(tmp_path / "out"), "--runtime", "local", "--agent", agent),
        ]
    )
    err = capsys.readouterr().err
    assert code == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"holon: error: {spec}: "), err
    assert expected in err, err
    assert not mark.exists()
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "logs").exists()
    with pytest.raises(InvalidInput, match=r"^spec\.yaml: "):
        parse_spec(text)


def test_docker_runtime_refuses_an_infinite_timeout_before_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOLON_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPECS["timeout-inf"][0])
    code = cli.main(
        [
            *("run", "--spec", str(spec), "--workspace", str(tmp_path)),
            *("--output", str(tmp_path / "out"), "--image", "busybox"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 64, err
    assert "constraints.timeout: invalid duration inf" in err
    assert not (tmp_path / "logs").exists()


POLICY_HEAD = "version: 1\nsettings:\n  cooldown: 10m\n"
RULE = "rules:\n  - name: r\n    on: github.issues.opened\n    do: status\n"

# Each row: the policy text and the line `holon serve --policy` must refuse it with.
POLICIES = {
    "duplicate-setting": (POLICY_HEAD + "  cooldown: 1s\n" + RULE, "line 4: invalid YAML"),
    "duplicate-in-a-rule": (
        POLICY_HEAD + RULE + "    do: stop\n",
        "line 8: invalid YAML (found duplicate key 'do')",
    ),
    "budget-5000-digits": (
        POLICY_HEAD + "  budget: " + "9" * 5000 + "\n" + RULE,
        "line 4: invalid YAML (integer too long (over 4300 digits))",
    ),
    "cooldown-nan": (
        POLICY_HEAD.replace("10m", ".nan") + RULE,
        "settings.cooldown: invalid duration nan: not a finite number",
    ),
    "expire-after-over-a-year": (
        POLICY_HEAD + "  expire_after: 99999999999h\n" + RULE,
        "settings.expire_after: invalid duration '99999999999h': at most 365d",
    ),
    "billion-laughs-in-args": (
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + BOMB
        + POLICY_HEAD
        + RULE
        + "    args: {bomb: *i}\n",
        "invalid YAML (aliases expand past 1000000 nodes)",
    ),
}


@pytest.mark.parametrize("case", sorted(POLICIES))
def test_serve_refuses_the_policy_before_touching_state(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = POLICIES[case]
    monkeypatch.setenv("HOLON_LOG_DIR", str(tmp_path / "logs"))
    policy = tmp_path / "policy.yaml"
    policy.write_text(text)
    state = tmp_path / "state"
    code = cli.main(["serve", "--state-dir", str(state), "--policy", str(policy), "--once"])
    err = capsys.readouterr().err
    assert code == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"holon: error: {policy}"), err
    assert expected in err, err
    assert not state.exists()
    assert not (tmp_path / "logs").exists()
    with pytest.raises(InvalidInput, match=r"^policy\.yaml line \d+: "):
        parse_policy(text)


def test_a_merge_key_may_still_be_overridden() -> None:
    """Not a duplicate: YAML's merge keys exist to be overridden."""
    policy = parse_policy(
        "version: 1\nrules:\n  - &base {name: r, on: github.issues.opened, do: status}\n"
        "  - <<: *base\n    name: overridden\n"
    )
    assert [rule.name for rule in policy.rules] == ["r", "overridden"]
