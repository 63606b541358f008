"""`holon run` and `holon probe` as a user types them: exit codes, one-line errors, no leftovers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from holon.cli.main import main
from tests.conftest import AGENT_SCRIPT

GOOD_SPEC = "version: v1\nkind: Holon\ngoal: {description: test}\ncontext: {env: {MODE: %s}}\n"
LOCAL = ["--runtime", "local", "--agent", f"sh {AGENT_SCRIPT}"]
HELLO = ["--runtime", "local", "--agent", f"{sys.executable} -m holon.examples.hello_agent"]


def _spec(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("mode", "code", "word"),
    [
        ("success", 0, "completed (success)"),
        ("fail", 1, "failed"),
        ("needs_human", 2, "needs_human"),
    ],
)
def test_exit_codes(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    mode: str,
    code: int,
    word: str,
) -> None:
    spec = _spec(tmp_path, GOOD_SPEC % mode)
    out = tmp_path / "out"
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output", str(out)]
    assert main([*argv, *LOCAL]) == code
    assert word in capsys.readouterr().out
    assert (out / "run.json").is_file()


def test_json_output_and_secret_never_printed(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "ghp_clisecretvalue123")
    spec = _spec(tmp_path, GOOD_SPEC % "inspect")
    out = tmp_path / "out"
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output", str(out)]
    assert main([*argv, *LOCAL, "--secret-env", "SECRET_TOKEN", "--json"]) == 0
    printed = capsys.readouterr()
    record = json.loads(printed.out)
    assert record["exit_code"] == 0
    assert record["snapshot"]["kind"] == "git"
    assert "ghp_clisecretvalue123" not in printed.out + printed.err
    assert "ghp_clisecretvalue123" not in (out / "run.json").read_text()
    # The agent got it (its env dump named it), and the published output holds it masked.
    assert "SECRET_TOKEN=***" in (out / "env.txt").read_text()
    assert any("forwarded secrets redacted" in n for n in record["notes"])


def test_workspace_from_spec_context(
    tmp_path: Path, make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo("project")
    spec = _spec(tmp_path, GOOD_SPEC % "success" + "  workspace: project\n".replace("  ", "", 0))
    spec.write_text(
        "version: v1\nkind: Holon\ngoal: {description: t}\n"
        "context: {workspace: project, env: {MODE: success}}\n"
    )
    out = tmp_path / "out"
    assert main(["run", "--spec", str(spec), "--output", str(out), *LOCAL]) == 0
    assert json.loads((out / "run.json").read_text())["snapshot"]["source"] == str(
        tmp_path / "project"
    )


def test_context_and_prompts_reach_the_agent(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "issue.md").write_text("the issue body")
    (tmp_path / "sys.md").write_text("system prompt")
    (tmp_path / "user.md").write_text("user prompt")
    agent = tmp_path / "copy.sh"
    agent.write_text(
        'cp -r "$HOLON_INPUT_DIR" "$HOLON_OUTPUT_DIR/seen"\n'
        'echo \'{"status":"completed","outcome":"success"}\' > "$HOLON_OUTPUT_DIR/manifest.json"\n'
    )
    spec = _spec(tmp_path, GOOD_SPEC % "x")
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--spec",
            str(spec),
            "--workspace",
            str(make_repo()),
            "--output",
            str(out),
            "--runtime",
            "local",
            "--agent",
            f"sh {agent}",
            "--context",
            str(context),
            "--system-prompt",
            str(tmp_path / "sys.md"),
            "--user-prompt",
            str(tmp_path / "user.md"),
        ]
    )
    assert code == 0
    seen = out / "seen"
    assert (seen / "context" / "issue.md").read_text() == "the issue body"
    assert (seen / "prompts" / "system.md").read_text() == "system prompt"
    assert (seen / "prompts" / "user.md").read_text() == "user prompt"
    assert "description: test" in (seen / "spec.yaml").read_text()


BAD_SPECS = {
    "bad yaml": ("version: v1\nkind: [\n", "invalid YAML"),
    "unknown kind": ("version: v1\nkind: Pod\ngoal: {description: x}\n", "unknown kind 'Pod'"),
    "unknown version": (
        "version: v9\nkind: Holon\ngoal: {description: x}\n",
        "unsupported version",
    ),
    "unknown key": ("version: v1\nkind: Holon\ngoal: {description: x}\nfoo: 1\n", "foo"),
    "missing goal": ("version: v1\nkind: Holon\n", "goal: Field required"),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_malformed_spec(
    case: str, tmp_path: Path, make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD_SPECS[case]
    spec = _spec(tmp_path, text)
    out = tmp_path / "out"
    code = main(["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output", str(out)])
    assert code == 64
    err = capsys.readouterr().err.strip()
    assert message in err
    assert len(err.splitlines()) == 1
    assert not out.exists()


def _bad_input_cases(tmp_path: Path, repo: Path) -> dict[str, tuple[list[str], str]]:
    spec = _spec(tmp_path, GOOD_SPEC % "success")
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("user data")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    base = ["run", "--spec", str(spec)]
    out = str(tmp_path / "out")
    return {
        "workspace not a dir": (
            [*base, "--workspace", str(a_file), "--output", out, *LOCAL],
            "workspace is not a directory",
        ),
        "output not empty": (
            [*base, "--workspace", str(repo), "--output", str(full), *LOCAL],
            "output directory is not empty",
        ),
        "unknown runtime": (
            [*base, "--workspace", str(repo), "--output", out, "--runtime", "podman"],
            "unknown runtime 'podman'",
        ),
        "missing agent command": (
            [
                *base,
                "--workspace",
                str(repo),
                "--output",
                out,
                "--runtime",
                "local",
                "--agent",
                "no-such-agent-binary",
            ],
            "agent command not found",
        ),
        "bad timeout": (
            [*base, "--workspace", str(repo), "--output", out, *LOCAL, "--timeout", "soon"],
            "--timeout: invalid duration 'soon'",
        ),
        "missing secret": (
            [*base, "--workspace", str(repo), "--output", out, *LOCAL, "--secret-env", "NOPE_X"],
            "NOPE_X: not set",
        ),
        "unknown flag": (
            [*base, "--workspace", str(repo), "--output", out, "--frobnicate"],
            "unrecognized arguments: --frobnicate",
        ),
        "memory lots": (
            [*base, "--workspace", str(repo), "--output", out, "--image", "x", "--memory", "lots"],
            "--memory: invalid size 'lots'",
        ),
        "memory 2gb": (
            [*base, "--workspace", str(repo), "--output", out, "--image", "x", "--memory", "2gb"],
            "--memory: invalid size '2gb'",
        ),
        "cpus word": (
            [*base, "--workspace", str(repo), "--output", out, "--image", "x", "--cpus", "many"],
            "--cpus: invalid value 'many'",
        ),
        "cpus zero": (
            [*base, "--workspace", str(repo), "--output", out, *LOCAL, "--cpus", "0"],
            "--cpus: invalid value '0'",
        ),
        "cpus infinite": (
            [*base, "--workspace", str(repo), "--output", out, "--image", "x", "--cpus", "inf"],
            "--cpus: invalid value 'inf'",
        ),
        "log limit": (
            [*base, "--workspace", str(repo), "--output", out, *LOCAL, "--log-limit", "0"],
            "--log-limit: invalid size '0'",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "workspace not a dir",
        "output not empty",
        "unknown runtime",
        "missing agent command",
        "bad timeout",
        "missing secret",
        "unknown flag",
        "memory lots",
        "memory 2gb",
        "cpus word",
        "cpus zero",
        "cpus infinite",
        "log limit",
    ],
)
def test_bad_input_exit_64_nothing_left(
    case: str, tmp_path: Path, make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv, message = _bad_input_cases(tmp_path, make_repo())[case]
    assert main(argv) == 64
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert message in last
    assert not (tmp_path / "out").exists()
    assert (tmp_path / "full" / "keep.txt").read_text() == "user data"
    assert sorted(p.name for p in (tmp_path / "full").iterdir()) == ["keep.txt"]
    # The run root in the temp dir was cleaned up too.
    assert not list(tmp_path.glob("holon-*"))


@pytest.mark.docker
def test_missing_image_exit_64(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    docker_client: object,
) -> None:
    spec = _spec(tmp_path, GOOD_SPEC % "success")
    out = tmp_path / "out"
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output", str(out)]
    assert main([*argv, "--image", "holon-missing:0"]) == 64
    err = capsys.readouterr().err.strip()
    assert err == (
        "holon: error: image 'holon-missing:0' is not in the local Docker engine "
        "(build or load it first, or pass --pull missing)"
    )
    assert not out.exists()


def test_usage_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 64
    assert main(["bogus"]) == 64
    assert main(["--help"]) == 0
    assert main(["run", "--help"]) == 0
    assert "--workspace" in capsys.readouterr().out
    assert main(["--version"]) == 0


def test_internal_error_exit_70_with_log(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import holon.runner

    def boom(request: object) -> None:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(holon.runner, "run", boom)
    monkeypatch.setenv("HOLON_LOG_DIR", str(tmp_path / "logs"))
    spec = _spec(tmp_path, GOOD_SPEC % "success")
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output", "o"]
    assert main([*argv, *LOCAL]) == 70
    err = capsys.readouterr().err.strip()
    log = tmp_path / "logs" / "holon-error.log"
    assert err == f"holon: internal error: RuntimeError; traceback in {log}"
    assert "RuntimeError: unexpected" in log.read_text()


def test_probe_local(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", *LOCAL]) == 0
    assert "probe ok" in capsys.readouterr().out
    assert main(["probe", *HELLO]) == 0
    out = tmp_path / "probe-out"
    assert main(["probe", *HELLO, "--output", str(out)]) == 0
    assert json.loads((out / "manifest.json").read_text())["outcome"] == "success"


def test_probe_fails_without_manifest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--runtime", "local", "--agent", "true"]) == 1
    assert "probe failed: invalid run: manifest.json: missing" in capsys.readouterr().out


@pytest.mark.docker
def test_probe_docker_image_entrypoint(
    agent_image: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", "--image", agent_image]) == 0
    assert "probe ok" in capsys.readouterr().out
    assert main(["probe", "--image", agent_image, "--agent", "/bin/true"]) == 1


def test_summary_states_violations_and_the_log_cut(
    tmp_path: Path, make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, GOOD_SPEC % "record_dirs")
    out = tmp_path / "out"
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output", str(out)]
    assert main([*argv, *LOCAL]) == 1
    summary = capsys.readouterr().out
    assert "violation: the agent made run.json a directory" in summary

    spec = _spec(
        tmp_path,
        "version: v1\nkind: Holon\ngoal: {description: t}\n"
        "context: {env: {MODE: print_lots, BYTES: '100000'}}\n",
        "lots.yaml",
    )
    out = tmp_path / "out2"
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo("r2")), "--output", str(out)]
    assert main([*argv, *LOCAL, "--log-limit", "10k"]) == 0
    summary = capsys.readouterr().out
    assert (
        "log: run.log keeps 10240 of 100011 bytes (limit 10240); 89771 cut at offset 5120"
        in summary
    )
    assert json.loads((out / "run.json").read_text())["log"]["limit"] == 10240


def _repo_skill(folder: Path, artifact: str) -> None:
    """A `github-issue-solve` of the repository's own that also requires `artifact`."""
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: github-issue-solve\ndescription: the repository's own\n"
        f"artifacts:\n  - path: {artifact}\n    required: true\n---\n"
    )


def test_run_skills_follow_cli_then_repository_config_then_built_in(
    tmp_path: Path, make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo()
    spec = _spec(tmp_path, GOOD_SPEC % "success")
    argv = ["run", "--spec", str(spec), "--workspace", str(repo), *LOCAL]
    # Built in: the agent changes the workspace and writes summary.md, so it succeeds.
    assert main([*argv, "--output", str(tmp_path / "a"), "--skill", "github-issue-solve"]) == 0
    (tmp_path / "a" / "run.json").unlink()
    # The repository's config (read by default) overrides it and asks for notes.md.
    _repo_skill(repo / ".holon" / "skills" / "github-issue-solve", "notes.md")
    (repo / ".holon" / "config.yaml").write_text("skills_dirs: [.holon/skills]\n")
    capsys.readouterr()
    assert main([*argv, "--output", str(tmp_path / "b"), "--skill", "github-issue-solve"]) == 1
    assert "required artifact(s) missing: notes.md" in capsys.readouterr().out
    # A folder on the command line beats the config; its artifact is summary.md.
    _repo_skill(tmp_path / "mine" / "github-issue-solve", "summary.md")
    ref = str(tmp_path / "mine" / "github-issue-solve")
    assert main([*argv, "--output", str(tmp_path / "c"), "--skill", ref]) == 0
    # --config names another file: an empty config, so the built-in skill again.
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    extra = ["--skill", "github-issue-solve", "--config", str(empty)]
    assert main([*argv, "--output", str(tmp_path / "d"), *extra]) == 0


@pytest.mark.parametrize(
    ("extra", "config", "says"),
    [
        (["--skill", "github-reveiw"], None, "--skill: unknown skill 'github-reveiw' (searched"),
        (["--skill", "github-publish"], None, "github-publish runs on the host"),
        (["--skill", "./nowhere"], None, "skill folder not found"),
        (["--skill", "github-review"], "skills: [../x]\n", "skills.0: must be a path relative"),
        (["--skill", "github-review"], "skils: []\n", "skils: Extra inputs are not permitted"),
    ],
)
def test_bad_skills_or_config_are_one_line_and_leave_nothing(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    config: str | None,
    says: str,
) -> None:
    repo = make_repo()
    if config is not None:
        (repo / ".holon").mkdir()
        (repo / ".holon" / "config.yaml").write_text(config)
    spec = _spec(tmp_path, GOOD_SPEC % "success")
    out = tmp_path / "out"
    argv = ["run", "--spec", str(spec), "--workspace", str(repo), "--output", str(out)]
    assert main([*argv, *LOCAL, *extra]) == 64
    err = capsys.readouterr().err
    assert says in err
    assert err.count("\n") == 1
    assert not out.exists()


def test_a_spec_naming_an_unknown_skill_is_invalid_input(
    tmp_path: Path, make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    text = GOOD_SPEC % "success" + "metadata: {skills: [no-such-skill]}\n"
    spec = _spec(tmp_path, text)
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo())]
    assert main([*argv, "--output", str(tmp_path / "out"), *LOCAL]) == 64
    assert "spec metadata.skills: unknown skill 'no-such-skill'" in capsys.readouterr().err
