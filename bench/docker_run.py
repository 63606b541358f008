"""Benchmark: `holon run` of a trivial agent with the docker backend, snapshot and diff included.

Target (from the issue): within 1.3x of `docker run --rm` of the same image with the same mounts,
user and network doing the same thing, median of at least 10 alternating runs.

The measured side is the real CLI in a subprocess (interpreter start-up, imports, spec loading,
snapshot, container, diff and run record all included). The baseline is the docker CLI running the
same image with the same entrypoint override, user, network, bind mounts (input read-only,
workspace, output, the git object store read-only), environment and security option, writing the
same manifest. Its input and workspace directories are prepared once, untimed; each side gets a
fresh empty output directory every run. Run from the repository root: `python -m bench.docker_run`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench._common import (
    MIN_ROUNDS,
    BenchError,
    Row,
    Samples,
    alternate,
    collect,
    git,
    record,
    report,
    scratch,
    seconds_text,
    timed,
)

TARGET = 1.3
SMOKE_ROUNDS = 1
MANIFEST = '{"status":"completed","outcome":"success"}'
# The trivial agent: write a valid manifest and exit. Used verbatim on both sides.
AGENT = ["/bin/sh", "-c", f"printf '%s' '{MANIFEST}' > /holon/output/manifest.json"]
SPEC = """\
version: v1
kind: Holon
metadata:
  name: bench-docker-run
goal:
  description: write a manifest and exit
"""
UNREACHABLE = 2


def engine_problem() -> str | None:
    """Why the docker CLI cannot talk to an engine here, or None when it can."""
    if shutil.which("docker") is None:
        return "the docker CLI is not on PATH"
    try:
        proc = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            check=False,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        return "the docker engine did not answer within 30 s"
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return (
            f"the docker engine is unreachable: {lines[-1] if lines else 'docker version failed'}"
        )
    return None


def ensure_image(tag: str | None) -> str:
    """The given image, or the test agent image built like the test suite builds it."""
    if tag is None:
        import docker

        from tests.support.images import ImageUnavailable, build_agent_image

        client = docker.from_env()
        try:
            tag = build_agent_image(client)
        except ImageUnavailable as exc:
            raise BenchError(f"the test agent image cannot be built: {exc}") from None
        finally:
            client.close()
    proc = subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False)
    if proc.returncode != 0:
        raise BenchError(f"image {tag!r} is not in the local docker engine")
    return tag


def installed_holon(work: Path) -> list[str]:
    """`holon` from Holon's wheel installed (not editable) into a fresh venv, as a user installs
    it; its dependencies are this environment's installed files, linked (bench/action.py)."""
    from bench.action import build_wheels, make_venv, pip_install

    wheels = build_wheels(work, None, smoke=True)  # Holon's wheel only; dependencies linked
    python = make_venv(work / "venv", wheels)
    pip_install(python, wheels, ["holon"])
    check = subprocess.run(
        [str(python), "-c", "import holon, sys; print(holon.__file__)"],
        cwd=work,  # not the checkout, whose holon/ the current directory would import
        capture_output=True,
        text=True,
        check=False,
    )
    if check.returncode != 0 or not check.stdout.startswith(str(work / "venv")):
        raise BenchError(f"the installed holon is not the venv's own: {check.stdout.strip()}")
    return [str(work / "venv" / "bin" / "holon")]


def holon_executable() -> list[str]:
    # The console script next to this interpreter is what a user of this venv runs.
    script = Path(sys.executable).parent / "holon"
    if script.is_file():
        return [str(script)]
    found = shutil.which("holon")
    if found is None:
        raise BenchError("the holon command is not installed (pip install -e .)")
    return [found]


def make_workspace(root: Path) -> Path:
    """A tiny git repository with one uncommitted change and one untracked file."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# bench\n")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print('hello')\n")
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    with (repo / "README.md").open("a") as handle:
        handle.write("uncommitted line\n")
    (repo / "notes.txt").write_text("untracked\n")
    (repo / "debug.log").write_text("ignored\n")
    return repo


class Sides:
    """The two commands being compared, with what each needs on disk."""

    def __init__(self, work: Path, image: str, *, editable: bool = False) -> None:
        self.work = work
        self.image = image
        self.repo = make_workspace(work)
        self.spec = work / "spec.yaml"
        self.spec.write_text(SPEC)
        self.holon = holon_executable() if editable else installed_holon(work / "installed")
        # holon puts its run directory under TMPDIR; keep it inside the benchmark's directory.
        self.tmp = work / "tmp"
        self.tmp.mkdir()
        self.env = {**os.environ, "TMPDIR": str(self.tmp)}
        # The baseline's /holon/input and /holon/workspace, prepared once like holon prepares them.
        base = work / "baseline"
        (base / "input" / "context").mkdir(parents=True)
        shutil.copy2(self.spec, base / "input" / "spec.yaml")
        subprocess.run(["cp", "-a", str(self.repo), str(base / "workspace")], check=True)
        self.base = base
        self.user = f"{os.getuid()}:{os.getgid()}"
        self.container_seconds: list[float] = []
        self.holon_cpu: list[float] = []  # user+sys of each measured holon process and its children

    def holon_argv(self, output: Path) -> list[str]:
        return [
            *self.holon,
            "run",
            "--runtime",
            "docker",
            "--image",
            self.image,
            "--agent",
            shlex.join(AGENT),
            "--network",
            "bridge",
            "--spec",
            str(self.spec),
            "--workspace",
            str(self.repo),
            "--output",
            str(output),
        ]

    def baseline_argv(self, output: Path, run_id: str) -> list[str]:
        def mount(src: Path, dst: str, readonly: bool = False) -> list[str]:
            return ["--mount", f"type=bind,src={src},dst={dst}" + (",readonly" if readonly else "")]

        env = {
            "HOLON_INPUT_DIR": "/holon/input",
            "HOLON_WORKSPACE_DIR": "/holon/workspace",
            "HOLON_OUTPUT_DIR": "/holon/output",
            "HOLON_RUN_ID": run_id,
        }
        return [
            "docker",
            "run",
            "--rm",
            "--user",
            self.user,
            "--network",
            "bridge",
            "--security-opt",
            "no-new-privileges",
            "--workdir",
            "/holon/workspace",
            "--label",
            f"holon.run_id={run_id}",
            *mount(self.base / "input", "/holon/input", readonly=True),
            *mount(self.base / "workspace", "/holon/workspace"),
            *mount(output, "/holon/output"),
            *mount(self.repo / ".git" / "objects", "/holon/git-objects", readonly=True),
            *[arg for key, value in env.items() for arg in ("--env", f"{key}={value}")],
            "--entrypoint",
            AGENT[0],
            self.image,
            *AGENT[1:],
        ]

    def timelines(self, count: int) -> None:
        """`count` traced holon runs, each beside a timed baseline run: ms from the spawn."""
        for i in range(count):
            print(f"baseline docker run --rm: {self.run_baseline(1000 + i) * 1000:.1f} ms")
            output = self.fresh_output(f"out-trace-{i}")
            start = time.time_ns()
            env = {**self.env, "HOLON_TRACE_TIMELINE": "1", "HOLON_TRACE_T0": str(start)}
            proc = subprocess.run(self.holon_argv(output), env=env, capture_output=True)
            ended = (time.time_ns() - start) / 1e6
            self.check_holon(proc, output)
            shutil.rmtree(output)
            for text in proc.stderr.decode("utf-8", "replace").splitlines():
                if text.startswith("holon-timeline "):
                    print("  " + text.removeprefix("holon-timeline "))
            print(f"  {ended:8.1f} (the holon process has exited)")

    def fresh_output(self, name: str) -> Path:
        output = self.work / name
        output.mkdir()
        return output

    def run_holon(self, i: int) -> float:
        output = self.fresh_output(f"out-holon-{i}")
        argv = self.holon_argv(output)
        proc: list[subprocess.CompletedProcess[bytes]] = []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = timed(
            lambda: proc.append(
                subprocess.run(argv, env=self.env, capture_output=True, check=False)
            )
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.holon_cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        self.check_holon(proc[0], output)
        shutil.rmtree(output)
        return seconds

    def run_library(self, i: int) -> float:
        """The same run as a library call in a warm process, as `holon serve` makes it."""
        from holon.contract.spec import load_spec
        from holon.runner import RunRequest, run

        output = self.fresh_output(f"out-library-{i}")
        request = RunRequest(
            spec=load_spec(self.spec),
            workspace=self.repo,
            output=output,
            runtime="docker",
            image=self.image,
            agent=list(AGENT),
            network="bridge",
            work_dir=self.tmp,
        )
        results: list[object] = []
        seconds = timed(lambda: results.append(run(request)))
        self.check_manifest(output)
        shutil.rmtree(output)
        return seconds

    def run_baseline(self, i: int) -> float:
        output = self.fresh_output(f"out-baseline-{i}")
        argv = self.baseline_argv(output, f"bench-{i}")
        proc: list[subprocess.CompletedProcess[bytes]] = []
        seconds = timed(lambda: proc.append(subprocess.run(argv, capture_output=True, check=False)))
        if proc[0].returncode != 0:
            raise BenchError(f"docker run failed: {_tail(proc[0])}")
        self.check_manifest(output)
        shutil.rmtree(output)
        return seconds

    def check_manifest(self, output: Path) -> None:
        manifest = output / "manifest.json"
        if not manifest.is_file() or manifest.read_text() != MANIFEST:
            raise BenchError(f"the agent did not write the expected manifest in {output}")

    def check_holon(self, proc: subprocess.CompletedProcess[bytes], output: Path) -> None:
        if proc.returncode != 0:
            raise BenchError(f"holon run exited {proc.returncode}: {_tail(proc)}")
        self.check_manifest(output)
        record = json.loads((output / "run.json").read_text())
        if record["status"] != "completed" or record["outcome"] != "success":
            raise BenchError(f"holon run recorded {record['status']}/{record['outcome']}")
        if record["patch"]["source"] != "runner" or record["patch"]["bytes"] != 0:
            raise BenchError(f"unexpected patch in the run record: {record['patch']}")
        if any(self.tmp.iterdir()):
            raise BenchError(f"holon left its run directory behind in {self.tmp}")
        # The container's own share of the run, as holon recorded it: tells where time goes.
        self.container_seconds.append(float(record["duration_seconds"]))


def _tail(proc: subprocess.CompletedProcess[bytes]) -> str:
    text = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
    return text[-1] if text else "(no output)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.docker_run", description=__doc__)
    parser.add_argument("--rounds", type=int, help=f"alternating rounds (default {MIN_ROUNDS})")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, check it works, do not judge the target"
    )
    parser.add_argument(
        "--image", help="agent image to use (default: build the busybox test agent image)"
    )
    parser.add_argument("--work-dir", type=Path, help="where to put the temporary directories")
    parser.add_argument(
        "--timeline",
        type=int,
        metavar="N",
        help="instead of the comparison: N traced runs of each side after the warm-up, each"
        " holon run's timeline printed (HOLON_TRACE_TIMELINE, holon/runner/timeline.py)",
    )
    parser.add_argument(
        "--editable",
        action="store_true",
        help="time this venv's holon (an editable install) instead of an installed wheel",
    )
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = SMOKE_ROUNDS if args.smoke else MIN_ROUNDS
    if args.rounds < 1 or (not args.smoke and args.rounds < MIN_ROUNDS):
        parser.error(f"--rounds must be at least {MIN_ROUNDS} (or use --smoke)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    problem = engine_problem()
    if problem is not None:
        print(f"cannot run the docker benchmark: {problem}", file=sys.stderr)
        return UNREACHABLE
    with scratch("holon-bench-docker-", args.work_dir) as tmp:
        try:
            image = ensure_image(args.image)
            sides = Sides(Path(tmp), image, editable=args.editable)
            print(f"image {image}; agent: {shlex.join(AGENT)}")
            # One checked run of each side, untimed, doubles as the warm-up.
            sides.run_baseline(-1)
            sides.run_holon(-1)
            sides.container_seconds.clear()
            sides.holon_cpu.clear()
            print("verified: both sides ran the agent and it wrote the manifest")
            if args.timeline:
                sides.timelines(args.timeline)
                return 0
            base, meas = alternate(args.rounds, sides.run_baseline, sides.run_holon)
            # Not judged: shows how much of the CLI's cost is interpreter start-up and imports.
            sides.run_library(-1)
            lib_base, lib = alternate(args.rounds, sides.run_baseline, sides.run_library)
        except BenchError as exc:
            print(f"benchmark failed: {exc}", file=sys.stderr)
            return UNREACHABLE
    how = "editable install" if args.editable else "installed wheel"
    code = report(
        f"holon run (docker) of a trivial agent vs docker run --rm "
        f"({args.rounds} alternating rounds)",
        Samples("holon run --runtime docker", meas),
        Samples("docker run --rm", base),
        TARGET,
        smoke=args.smoke,
        figure=f"`holon run --runtime docker` ({how})",
    )
    inside = Samples("", sides.container_seconds).median
    print(f"  (holon's recorded container time, median: {inside:.3f}s of the measured run)")
    cpu = Samples("", sides.holon_cpu)
    print(
        f"  (CPU of the holon process, user+sys with its git children, median {cpu.median:.3f}s,"
        f" min {min(sides.holon_cpu):.3f}s: on a machine others share, steadier than wall time)"
    )
    lib_median = Samples("", lib).median
    lib_ratio = lib_median / Samples("", lib_base).median
    print(
        f"  (not judged: run() as a library call in a warm process, median {lib_median:.3f}s,"
        f" {lib_ratio:.2f}x its own alternating baseline)"
    )
    record(
        Row(
            "runner.run() in a warm process (no CLI start-up)",
            seconds_text(lib_median),
            seconds_text(Samples("", lib_base).median),
            f"{lib_ratio:.2f}x",
            "reported",
            None,
        )
    )
    return code


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
