"""`holon agent` end to end in a real layout on disk, in-process, with a fake engine: a manifest
in every case, with the exit code its outcome gives."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from holon.agent.conversation import Usage
from holon.agent.engine import EngineResult, EngineTask, Recorder
from holon.agent.engines import registry
from holon.agent.main import RUNNER_DEFAULT_TIMEOUT, Options, margin_for, run_agent
from holon.agent.providers.base import MissingCredentials
from tests.agent.fakes import (
    KEY,
    Layout,
    ScriptedEngine,
    evidence_text,
    finished,
    make_layout,
    passing_tests,
    shell,
)

SOLVE_SKILL = """\
---
name: solve
description: Solve the issue.
inputs:
  - name: issue
requires:
  change: true
  verification: true
artifacts:
  - path: report.json
---
"""


@pytest.fixture
def use_engine(monkeypatch: pytest.MonkeyPatch) -> Callable[[ScriptedEngine], ScriptedEngine]:
    def use(engine: ScriptedEngine) -> ScriptedEngine:
        def factory(env: Mapping[str, str], model: str | None) -> ScriptedEngine:
            return engine

        monkeypatch.setitem(registry.FACTORIES, "fake", factory)
        return engine

    return use


def _layout(tmp_path: Path, skills: str = "solve", **kwargs: Any) -> Layout:
    layout = make_layout(tmp_path, skills=skills, **kwargs)
    folder = layout.input / "skills" / "solve"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SOLVE_SKILL)
    (folder / "prompt.md.j2").write_text("Solve issue {{ inputs.issue }}: {{ goal }}\n")
    return layout


def _run(layout: Layout, *, probe: bool = False, engine: str = "fake", **env: str) -> int:
    return run_agent(Options(probe=probe, engine=engine), layout.env(**env), harden=False)


def _manifest(layout: Layout) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((layout.output / "manifest.json").read_text())
    return data


def test_success_writes_everything(tmp_path: Path, use_engine: Any) -> None:
    layout = _layout(tmp_path)
    engine = use_engine(ScriptedEngine(passing_tests))
    assert _run(layout, ANTHROPIC_API_KEY=KEY) == 0
    manifest = _manifest(layout)
    assert manifest["status"] == "completed"
    assert manifest["outcome"] == "success"
    assert manifest["metadata"]["agent"] == "holon"
    assert manifest["metadata"]["engine"] == {
        "name": "fake",
        "model": "fake-model",
        "version": "1.0",
    }
    assert manifest["metadata"]["turns"] == 3
    assert manifest["metadata"]["usage"] == {"input_tokens": 10, "output_tokens": 5, "requests": 1}
    paths = [a["path"] for a in manifest["artifacts"]]
    assert paths[:4] == [
        "summary.md",
        "evidence/transcript.ndjson",
        "evidence/commands.ndjson",
        "evidence/usage.json",
    ]
    commands = (layout.output / "evidence/commands.ndjson").read_text().splitlines()
    assert json.loads(commands[0])["exit_code"] == 0
    summary = (layout.output / "summary.md").read_text()
    assert "# Holon agent: success" in summary
    assert "- 1: exit 0: `true`" in summary
    assert "command 1: passed (exit 0)" in summary
    # What the engine was given: the compiled prompts and the spec's budgets.
    task = engine.tasks[0]
    assert "Solve issue 7: Fix the failing test" in task.system
    assert task.budgets.max_turns == 12
    assert task.budgets.deadline is not None
    left = task.budgets.deadline - time.monotonic()
    assert 300 - margin_for(300) - 5 < left <= 300 - margin_for(300)
    assert task.workspace == layout.workspace


def _result_of(result: EngineResult) -> Callable[[EngineTask, Recorder], EngineResult]:
    return lambda task, recorder: result


def _failing_tests(task: EngineTask, recorder: Recorder) -> EngineResult:
    (task.workspace / "fixed.txt").write_text("fixed\n")
    return finished(verification=[shell(task, recorder, "exit 3")])


def _unchanged(task: EngineTask, recorder: Recorder) -> EngineResult:
    return finished(verification=[shell(task, recorder, "true")])


def _rewrites_evidence(task: EngineTask, recorder: Recorder) -> EngineResult:
    (task.workspace / "fixed.txt").write_text("fixed\n")
    command = shell(task, recorder, "exit 1")
    # The model's shell rewrites the evidence to say the run passed.
    (task.output / "evidence/commands.ndjson").write_text(
        json.dumps({"id": command, "command": "pytest", "exit_code": 0}) + "\n"
    )
    return finished(verification=[command])


def _needs_human(task: EngineTask, recorder: Recorder) -> EngineResult:
    return finished("needs_human", question={"id": "db", "text": "Postgres or SQLite?"})


def _crash(task: EngineTask, recorder: Recorder) -> EngineResult:
    raise RuntimeError(f"provider said no\nwith key {KEY}")


CASES = [
    ("cited command failed", _failing_tests, 1, "verification command 1 exited with 3, not 0"),
    ("no change", _unchanged, 1, "the workspace is unchanged"),
    ("evidence rewritten", _rewrites_evidence, 1, "verification command 1 exited with 1, not 0"),
    ("no finish", _result_of(EngineResult(stop="no_finish")), 1, "without calling finish"),
    ("max steps", _result_of(EngineResult(stop="max_steps")), 1, "max_steps 12 reached"),
    ("engine timeout", _result_of(EngineResult(stop="timeout")), 1, "timeout after 5m"),
    ("refused", _result_of(EngineResult(stop="refused", error="policy")), 1, "provider refused"),
    ("needs human", _needs_human, 2, None),
    ("crash", _crash, 1, "the engine crashed: RuntimeError: provider said no with key ***"),
]


@pytest.mark.parametrize(
    ("script", "code", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_ending_has_its_manifest(
    tmp_path: Path, use_engine: Any, script: Any, code: int, error: str | None
) -> None:
    layout = _layout(tmp_path)
    use_engine(ScriptedEngine(script))
    assert _run(layout, ANTHROPIC_API_KEY=KEY) == code
    manifest = _manifest(layout)
    assert manifest["outcome"] == {0: "success", 1: "failure", 2: "needs_human"}[code]
    if error is not None:
        assert error in manifest["error"]
        assert "\n" not in manifest["error"]
    if code == 2:
        assert manifest["question"] == {"id": "db", "text": "Postgres or SQLite?"}
        assert manifest["status"] == "completed"
    assert (layout.output / "summary.md").is_file()
    assert KEY not in evidence_text(layout.output)


def test_a_crash_leaves_its_traceback_in_the_evidence_masked(
    tmp_path: Path, use_engine: Any
) -> None:
    layout = _layout(tmp_path)
    use_engine(ScriptedEngine(_crash))
    assert _run(layout, ANTHROPIC_API_KEY=KEY) == 1
    log = (layout.output / "evidence/agent-error.log").read_text()
    assert "Traceback" in log
    assert "_crash" in log
    assert KEY not in log
    assert "traceback in evidence/agent-error.log" in _manifest(layout)["error"]


def test_missing_credentials_fail_fast(tmp_path: Path, use_engine: Any) -> None:
    layout = _layout(tmp_path)
    engine = use_engine(ScriptedEngine(passing_tests, lacking="ANTHROPIC_API_KEY is not set"))
    assert _run(layout) == 1
    assert engine.tasks == []  # no model was called
    assert _manifest(layout)["error"] == "engine fake cannot run: ANTHROPIC_API_KEY is not set"


def test_credentials_missing_when_the_engine_is_built(tmp_path: Path, monkeypatch: Any) -> None:
    def factory(env: Mapping[str, str], model: str | None) -> ScriptedEngine:
        raise MissingCredentials("OPENAI_API_KEY is not set")

    monkeypatch.setitem(registry.FACTORIES, "fake", factory)
    layout = _layout(tmp_path)
    assert _run(layout) == 1
    assert _manifest(layout)["error"] == "engine fake cannot run: OPENAI_API_KEY is not set"


def test_replay_without_a_session_fails_fast(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    assert _run(layout, engine="replay") == 1
    assert "HOLON_REPLAY_SESSION is not set" in _manifest(layout)["error"]


def test_unknown_and_unavailable_engines(tmp_path: Path, monkeypatch: Any) -> None:
    layout = _layout(tmp_path)
    assert _run(layout, engine="nope") == 1
    assert _manifest(layout)["error"].startswith("unknown engine 'nope' (known: builtin,")

    def ghost(env: Mapping[str, str], model: str | None) -> Any:
        return registry._attr("holon.agent.engines.ghost_engine", "GhostEngine")

    monkeypatch.setitem(registry.FACTORIES, "ghost", ghost)
    assert _run(layout, engine="ghost") == 1
    assert _manifest(layout)["error"] == (
        "engine ghost is not available in this installation "
        "(holon.agent.engines.ghost_engine is missing)"
    )


BAD_SKILL = "---\nname: solve\ndescription: [unclosed\n---\n"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ("no spec", "spec.yaml missing: no file at"),
        ("bad spec", "spec.yaml: invalid YAML"),
        ("unknown skill", "unknown skill 'nonesuch': not in the input's skills/ nor built in"),
        ("bad SKILL.md", "skills/solve/SKILL.md: frontmatter is not valid YAML"),
        ("host skill", "skill github-publish runs on the host"),
        ("bad template", "skill solve: prompt.md.j2: template syntax error at line 1"),
    ],
)
def test_bad_input_is_a_failure_manifest(
    tmp_path: Path, use_engine: Any, change: str, error: str
) -> None:
    layout = _layout(tmp_path)
    engine = use_engine(ScriptedEngine(passing_tests))
    spec = layout.input / "spec.yaml"
    if change == "no spec":
        spec.unlink()
    elif change == "bad spec":
        spec.write_text("version: v1\nkind: [\n")
    elif change == "unknown skill":
        spec.write_text(spec.read_text().replace("skills: [solve]", "skills: [nonesuch]"))
    elif change == "host skill":
        spec.write_text(spec.read_text().replace("skills: [solve]", "skills: [github-publish]"))
    elif change == "bad SKILL.md":
        (layout.input / "skills/solve/SKILL.md").write_text(BAD_SKILL)
    else:
        (layout.input / "skills/solve/prompt.md.j2").write_text("{% if %}")
    assert _run(layout) == 1
    manifest = _manifest(layout)
    assert manifest["status"] == "failed"
    assert error in manifest["error"]
    assert engine.tasks == []


def test_the_builtin_catalog_when_the_input_has_no_skill_folder(
    tmp_path: Path, use_engine: Any
) -> None:
    layout = make_layout(tmp_path, skills="github-review")
    engine = use_engine(ScriptedEngine(passing_tests))
    assert _run(layout) == 0
    assert "# Your task's skill: github-review" in engine.tasks[0].system


def test_an_engine_overrunning_its_deadline_is_stopped_in_time(
    tmp_path: Path, use_engine: Any
) -> None:
    spec = "version: v1\nkind: Holon\ngoal:\n  description: slow\nconstraints:\n  timeout: 2s\n"
    layout = make_layout(tmp_path, spec=spec, git=False)

    def ignores_deadline(task: EngineTask, recorder: Recorder) -> EngineResult:
        recorder.usage(Usage(input_tokens=3))
        time.sleep(10)
        return finished()

    use_engine(ScriptedEngine(ignores_deadline))
    started = time.monotonic()
    assert _run(layout) == 1
    assert time.monotonic() - started < 2.0  # before the runner's own 2s timeout
    manifest = _manifest(layout)
    assert manifest["error"] == "timeout after 2s: the engine overran its deadline"
    assert manifest["metadata"]["usage"]["input_tokens"] == 3


def test_the_command_environment_holds_no_secret(tmp_path: Path, use_engine: Any) -> None:
    layout = _layout(tmp_path)
    seen: dict[str, str] = {}

    def look(task: EngineTask, recorder: Recorder) -> EngineResult:
        seen.update(task.command_env)
        import subprocess

        seen["child"] = subprocess.run(
            ["sh", "-c", "env"],
            env=dict(task.command_env),
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        return finished()

    use_engine(ScriptedEngine(look))
    _run(
        layout,
        ANTHROPIC_API_KEY=KEY,
        MY_SERVICE_TOKEN="plainvalue1",
        DB_PASSWORD="plainvalue2",
        INNOCENT_NAME="ghp_" + "b" * 36,
        HARMLESS="visible",
    )
    for name in ("ANTHROPIC_API_KEY", "MY_SERVICE_TOKEN", "DB_PASSWORD", "INNOCENT_NAME"):
        assert name not in seen
    assert seen["HARMLESS"] == "visible"
    assert "PATH" in seen
    assert KEY not in seen["child"]
    assert "plainvalue1" not in seen["child"]


def test_no_secret_reaches_any_output(tmp_path: Path, use_engine: Any) -> None:
    layout = _layout(tmp_path)
    forwarded = "forwarded-plain-secret"

    def leaky(task: EngineTask, recorder: Recorder) -> EngineResult:
        recorder.transcript({"kind": "turn", "text": f"the key is {KEY} and {forwarded}"})
        shell(task, recorder, f"echo {KEY} {forwarded}")
        return EngineResult(stop="error", error=f"HTTP 401 for key {KEY} / {forwarded}")

    use_engine(ScriptedEngine(leaky))
    assert _run(layout, ANTHROPIC_API_KEY=KEY, SERVICE_SECRET=forwarded) == 1
    text = evidence_text(layout.output)
    assert KEY not in text
    assert forwarded not in text
    assert "HTTP 401 for key ***" in _manifest(layout)["error"]


def test_a_link_the_model_planted_is_replaced_not_followed(tmp_path: Path, use_engine: Any) -> None:
    layout = _layout(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")

    def plants(task: EngineTask, recorder: Recorder) -> EngineResult:
        (task.output / "manifest.json").symlink_to(victim)
        (task.output / "summary.md").symlink_to(victim)
        return passing_tests(task, recorder)

    use_engine(ScriptedEngine(plants))
    assert _run(layout) == 0
    assert victim.read_text() == "precious\n"
    assert not (layout.output / "manifest.json").is_symlink()
    assert _manifest(layout)["outcome"] == "success"


def test_probe(tmp_path: Path, use_engine: Any) -> None:
    layout = _layout(tmp_path)
    engine = use_engine(ScriptedEngine(passing_tests))
    assert _run(layout, probe=True) == 0
    manifest = _manifest(layout)
    assert (manifest["status"], manifest["outcome"]) == ("completed", "success")
    assert manifest["metadata"]["mode"] == "probe"
    assert engine.tasks == []
    assert not (layout.output / "evidence").exists()


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ("no spec", "probe: spec.yaml missing"),
        ("no key", "probe: engine fake: ANTHROPIC_API_KEY is not set"),
        ("unknown engine", "probe: unknown engine 'nope'"),
        ("unknown skill", "probe: unknown skill 'nonesuch'"),
    ],
)
def test_probe_names_what_is_missing(
    tmp_path: Path, use_engine: Any, change: str, error: str
) -> None:
    layout = _layout(tmp_path)
    lacking = "ANTHROPIC_API_KEY is not set" if change == "no key" else None
    engine = use_engine(ScriptedEngine(passing_tests, lacking=lacking))
    spec = layout.input / "spec.yaml"
    if change == "no spec":
        spec.unlink()
    if change == "unknown skill":
        spec.write_text(spec.read_text().replace("skills: [solve]", "skills: [nonesuch]"))
    code = _run(layout, probe=True, engine="nope" if change == "unknown engine" else "fake")
    assert code == 1
    assert _manifest(layout)["error"].startswith(error)
    assert engine.tasks == []


def test_an_output_that_cannot_be_a_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = make_layout(tmp_path, git=False)
    layout.output.rmdir()
    layout.output.write_text("a file")
    assert _run(layout) == 1
    err = capsys.readouterr().err
    assert err.startswith("holon agent: cannot open the output directory")
    assert err.count("\n") == 1


def test_the_default_timeout_is_the_runners() -> None:
    from holon.runner.run import DEFAULT_TIMEOUT

    assert RUNNER_DEFAULT_TIMEOUT == DEFAULT_TIMEOUT


def test_the_agent_leaves_signal_handlers_as_it_found_them(tmp_path: Path, use_engine: Any) -> None:
    import signal

    before = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGALRM))
    use_engine(ScriptedEngine(passing_tests))
    _run(_layout(tmp_path))
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGALRM)) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert os.environ.get("HOLON_INPUT_DIR") is None


def test_a_misconfigured_provider_is_named(tmp_path: Path, monkeypatch: Any) -> None:
    from holon.agent.providers.base import ProviderError

    def factory(env: Mapping[str, str], model: str | None) -> ScriptedEngine:
        raise ProviderError("unknown model provider 'mystery' (known: anthropic, openai)")

    monkeypatch.setitem(registry.FACTORIES, "fake", factory)
    layout = _layout(tmp_path)
    assert _run(layout) == 1
    assert _manifest(layout)["error"] == (
        "engine fake: unknown model provider 'mystery' (known: anthropic, openai)"
    )
