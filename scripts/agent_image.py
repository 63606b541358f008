"""Build Holon's agent image from local parts only, with the top-level Dockerfile.

    python scripts/agent_image.py [--cache DIR] [--tag TAG]

prints the image's tag on stdout, its progress on stderr. No image is pulled from a registry:

1. a Debian bookworm root filesystem made with `debootstrap --variant=minbase` (python3, its venv
   module, git, ca-certificates, bash), trimmed, tarred and `docker import`ed as the base image;
2. Holon's wheel built from this checkout, and its dependencies' wheels for CPython 3.11 on
   manylinux downloaded with `pip download --only-binary=:all:`;
3. `docker build` of the Dockerfile with `BASE=<the imported image>`, `OS_PACKAGES=0` (the root
   filesystem already has them; apt-get could not reach a mirror), `ENGINE_CLIS=0` (no npm
   registry here) and `OFFLINE=1`, on network `none`.

Everything is cached under `.cache/agent-image/`, keyed by a hash of its inputs (the root
filesystem by the package list, the wheels by pyproject.toml and Holon's sources, the image by all
of them and the Dockerfile), and an image already built from the same inputs is reused: a second
build takes seconds. Debootstrap needs root (or passwordless sudo); when it is not installed, its
Debian package is fetched with `apt-get download` and run from where it was unpacked.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = REPO / ".cache" / "agent-image"
DEFAULT_REPOSITORY = "holon-agent-local"
BASE_REPOSITORY = "holon-agent-base"
INPUTS_LABEL = "org.holon.agent-image.inputs"
# Images of earlier inputs kept beside the newest (other checkouts on the machine may use them).
KEEP_IMAGES = 3

SUITE = "bookworm"
PACKAGES = ("python3", "python3-venv", "git", "ca-certificates", "bash")
# What a container never needs from the root filesystem: docker provides /dev, /proc and /sys,
# and package caches, documentation and translations are a third of its size.
TRIMMED = (
    "./dev/*",
    "./proc/*",
    "./sys/*",
    "./run/*",
    "./tmp/*",
    "./var/cache/apt/*",
    "./var/lib/apt/lists/*",
    "./usr/share/doc/*",
    "./usr/share/man/*",
    "./usr/share/info/*",
    "./usr/share/locale/*",
)
# Bookworm's C library is glibc 2.36; pip wants every manylinux tag it may take spelled out.
GLIBC_MINOR = 36
BUILD_ARGS = {"OS_PACKAGES": "0", "ENGINE_CLIS": "0", "OFFLINE": "1"}
# The files a Holon wheel is made of (pyproject's packages, package-dir and readme).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "holon/", "skills/", "schemas/")
CONTEXT_FILES = ("Dockerfile", ".dockerignore")


class ImageUnavailable(RuntimeError):
    """The image cannot be built on this machine; the message says why, in one line."""


def say(message: str) -> None:
    print(f"agent image: {message}", file=sys.stderr, flush=True)


def _digest(*parts: bytes | str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()


def _tail(text: bytes | str, lines: int = 3) -> str:
    decoded = text.decode(errors="replace") if isinstance(text, bytes) else text
    return " | ".join(line.strip() for line in decoded.strip().splitlines()[-lines:])


def _run(argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(list(argv), capture_output=True, check=False, **kwargs)


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    """One build per cache at a time: parallel test sessions share it."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


# -- inputs ---------------------------------------------------------------------------------


def wheel_source_files(repo: Path = REPO) -> list[str]:
    """The checkout's files that make Holon's wheel: tracked, or new and not ignored."""
    listed = _run(
        [
            "git",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            *WHEEL_SOURCES,
        ],
        cwd=repo,
    )
    if listed.returncode != 0:
        raise ImageUnavailable(f"cannot list Holon's sources: {_tail(listed.stderr)}")
    names = sorted(filter(None, listed.stdout.decode().split("\0")))
    return [name for name in names if (repo / name).is_file() and not (repo / name).is_symlink()]


def source_key(repo: Path = REPO) -> str:
    parts: list[bytes | str] = []
    for name in wheel_source_files(repo):
        parts += [name, (repo / name).read_bytes()]
    return _digest(*parts)


def dependencies(repo: Path = REPO) -> list[str]:
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    return [str(requirement) for requirement in project["dependencies"]]


def wheel_platforms(machine: str | None = None) -> list[str]:
    arch = machine or platform.machine()
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(GLIBC_MINOR, 16, -1)]
    return [*tags, f"manylinux2014_{arch}"]


def rootfs_key() -> str:
    return _digest("rootfs", SUITE, ",".join(PACKAGES), "\n".join(TRIMMED), platform.machine())


def deps_key(repo: Path = REPO) -> str:
    return _digest("deps", *dependencies(repo), *wheel_platforms())


def image_key(base_id: str, holon_key: str, dependency_key: str, repo: Path = REPO) -> str:
    context = [(repo / name).read_bytes() for name in CONTEXT_FILES]
    args = ",".join(f"{k}={v}" for k, v in sorted(BUILD_ARGS.items()))
    return _digest("image", base_id, holon_key, dependency_key, args, *context)


def _replace_others(cache: Path, pattern: str, keep: Path) -> None:
    """Earlier versions of a cached part go once a new one is in place."""
    for old in cache.glob(pattern):
        if old != keep:
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)


# -- the root filesystem ----------------------------------------------------------------------


def _privilege() -> list[str]:
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and _run(["sudo", "-n", "true"]).returncode == 0:
        return ["sudo", "-n"]
    raise ImageUnavailable("debootstrap needs root or passwordless sudo to make a root filesystem")


def debootstrap_command(cache: Path) -> tuple[list[str], dict[str, str]]:
    """debootstrap as installed, else unpacked from its Debian package into the cache."""
    installed = shutil.which("debootstrap")
    if installed:
        return [installed], {}
    unpacked = cache / "debootstrap"
    script = unpacked / "usr" / "sbin" / "debootstrap"
    if not script.is_file():
        if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
            raise ImageUnavailable("no debootstrap, and no apt-get/dpkg-deb to fetch it")
        say("fetching debootstrap with apt-get download")
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            fetched = _run(["apt-get", "download", "debootstrap"], cwd=tmp)
            debs = list(Path(tmp).glob("debootstrap_*.deb"))
            if fetched.returncode != 0 or not debs:
                raise ImageUnavailable(f"cannot fetch debootstrap: {_tail(fetched.stderr)}")
            staged = Path(tmp) / "x"
            extracted = _run(["dpkg-deb", "-x", str(debs[0]), str(staged)])
            if extracted.returncode != 0:
                raise ImageUnavailable(f"cannot unpack debootstrap: {_tail(extracted.stderr)}")
            shutil.rmtree(unpacked, ignore_errors=True)
            os.replace(staged, unpacked)
    return [str(script)], {"DEBOOTSTRAP_DIR": str(unpacked / "usr" / "share" / "debootstrap")}


def _unmount_under(root: Path) -> None:
    """A debootstrap that died may leave /proc or /sys mounted inside; never delete through one."""
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    for point in sorted(points, reverse=True):
        if point == str(root) or point.startswith(f"{root}/"):
            _run([*_privilege(), "umount", "-l", point])


def build_rootfs(cache: Path, mirror: str | None = None) -> Path:
    """The trimmed root filesystem as a tarball in the cache (made once per package list)."""
    target = cache / f"rootfs-{rootfs_key()[:16]}.tar"
    if target.is_file():
        return target
    sudo = _privilege()
    command, env = debootstrap_command(cache)
    mirror = mirror or os.environ.get("HOLON_DEBIAN_MIRROR")
    work = Path(tempfile.mkdtemp(prefix="rootfs-", dir=cache))
    root = work / "root"
    log = cache / "debootstrap.log"
    try:
        say(f"debootstrap {SUITE} (minbase + {', '.join(PACKAGES)}): about a minute, once")
        started = time.monotonic()
        argv = [
            *sudo,
            *(["env", *(f"{k}={v}" for k, v in env.items())] if env else []),
            *command,
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            SUITE,
            str(root),
            *([mirror] if mirror else []),  # else debootstrap's own default mirror
        ]
        with log.open("wb") as out:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise ImageUnavailable(f"debootstrap failed: {_tail(log.read_bytes())} (see {log})")
        say(f"root filesystem ready in {time.monotonic() - started:.0f}s; packing it")
        partial = work / "rootfs.tar"
        excludes = [f"--exclude={pattern}" for pattern in TRIMMED]
        with partial.open("wb") as out:
            packed = subprocess.run(
                [*sudo, "tar", "--numeric-owner", "-C", str(root), *excludes, "-c", "."],
                stdout=out,
                stderr=subprocess.PIPE,
                check=False,
            )
        if packed.returncode != 0:
            raise ImageUnavailable(f"cannot pack the root filesystem: {_tail(packed.stderr)}")
        os.replace(partial, target)
        _replace_others(cache, "rootfs-*.tar", target)
        return target
    finally:
        _unmount_under(work)
        if sudo:
            _run([*sudo, "rm", "-rf", "--one-file-system", str(work)])
        else:
            _run(["rm", "-rf", "--one-file-system", str(work)])


def base_image(client: Any, tarball: Path) -> tuple[str, str]:
    """The root filesystem imported as an image, tagged by the tarball's key (reused if there);
    returns its tag and id."""
    from docker.errors import ImageNotFound

    tag = f"{BASE_REPOSITORY}:{tarball.stem.removeprefix('rootfs-')}"
    try:
        return tag, str(client.images.get(tag).id)
    except ImageNotFound:
        pass
    say(f"docker import {tarball.name} as {tag}")
    repository, _, version = tag.partition(":")
    client.api.import_image_from_file(str(tarball), repository=repository, tag=version)
    return tag, str(client.images.get(tag).id)


# -- wheels -------------------------------------------------------------------------------------


def holon_wheel(cache: Path, repo: Path = REPO) -> tuple[Path, str]:
    """Holon's wheel built from a copy of this checkout's sources (setuptools would litter the
    tree with build/), cached by their hash."""
    key = source_key(repo)
    target = cache / f"holon-{key[:16]}"
    built = sorted(target.glob("holon-*.whl")) if target.is_dir() else []
    if built:
        return built[0], key
    say("building Holon's wheel from this checkout")
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        source = Path(tmp) / "source"
        for name in wheel_source_files(repo):
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / name, source / name)
        staged = Path(tmp) / "dist"
        made = _run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
             "--quiet", "-w", str(staged), str(source)],
        )  # fmt: skip
        if made.returncode != 0 or not list(staged.glob("holon-*.whl")):
            raise ImageUnavailable(f"pip wheel failed: {_tail(made.stderr)}")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staged, target)
    _replace_others(cache, "holon-*", target)
    return next(target.glob("holon-*.whl")), key


def dependency_wheels(cache: Path, repo: Path = REPO) -> tuple[Path, str]:
    """Binary wheels of Holon's dependencies for CPython 3.11 on this machine's manylinux."""
    key = deps_key(repo)
    target = cache / f"deps-{key[:16]}"
    if target.is_dir():
        return target, key
    say("downloading the wheels of Holon's dependencies (cp311, manylinux)")
    platforms = [arg for tag in wheel_platforms() for arg in ("--platform", tag)]
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        staged = Path(tmp) / "wheels"
        got = _run(
            [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet",
             "--only-binary=:all:", *platforms, "--python-version", "3.11",
             "--implementation", "cp", "--abi", "cp311", "-d", str(staged),
             *dependencies(repo)],
        )  # fmt: skip
        if got.returncode != 0:
            raise ImageUnavailable(f"pip download failed: {_tail(got.stderr)}")
        os.replace(staged, target)
    _replace_others(cache, "deps-*", target)
    return target, key


# -- the image ----------------------------------------------------------------------------------


def _existing(client: Any, tag: str, key: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        image = client.images.get(tag)
    except ImageNotFound:
        return False
    labels = (image.attrs.get("Config") or {}).get("Labels") or {}
    return bool(labels.get(INPUTS_LABEL) == key)


def _context(cache: Path, wheel: Path, deps: Path, repo: Path) -> Path:
    """The build context the Dockerfile expects: itself, .dockerignore and the wheels in dist/."""
    context = Path(tempfile.mkdtemp(prefix="context-", dir=cache))
    for name in CONTEXT_FILES:
        shutil.copy2(repo / name, context / name)
    dist = context / "dist"
    dist.mkdir()
    for source in [wheel, *sorted(deps.glob("*.whl"))]:
        os.link(source, dist / source.name)
    return context


def _docker_build(client: Any, context: Path, tag: str, base: str, key: str) -> list[str]:
    """Build the image; return the ids of the stages before the last, which nothing tags."""
    stream = client.api.build(
        path=str(context),
        tag=tag,
        buildargs={"BASE": base, **BUILD_ARGS},
        labels={INPUTS_LABEL: key},
        network_mode="none",
        pull=False,
        rm=True,
        forcerm=True,
        decode=True,
    )
    stages: list[str] = []
    latest = None
    for entry in stream:
        if "error" in entry:
            raise ImageUnavailable(f"docker build failed: {_tail(str(entry['error']))}")
        text = " ".join(str(entry.get("stream", "")).split())
        if text.startswith("---> ") and " " not in text[5:]:
            latest = text[5:]  # the image after each step
        if text.startswith("Step "):
            if " : FROM " in text and latest is not None:
                stages.append(latest)
            say(text if len(text) <= 100 else f"{text[:97]}...")
    return stages


def _remove(client: Any, image: str) -> None:
    from docker.errors import DockerException

    with contextlib.suppress(DockerException):
        client.images.remove(image, noprune=False)


def _prune(client: Any, repository: str, keep: int) -> None:
    """Only the newest images of a repository stay: each change of Holon's sources makes one."""
    images = sorted(
        client.images.list(name=repository),
        key=lambda image: str(image.attrs.get("Created", "")),
        reverse=True,
    )
    for image in images[keep:]:
        for tag in image.tags:
            if tag.startswith(f"{repository}:"):
                _remove(client, tag)


def build(client: Any, cache: Path = DEFAULT_CACHE, tag: str | None = None) -> str:
    """Build (or reuse) the agent image from local parts; return its tag."""
    cache = cache.resolve()
    repo = REPO
    with _locked(cache):
        tarball = build_rootfs(cache)
        base, base_id = base_image(client, tarball)
        wheel, holon_key = holon_wheel(cache, repo)
        deps, dependency_key = dependency_wheels(cache, repo)
        key = image_key(base_id, holon_key, dependency_key, repo)
        tag = tag or f"{DEFAULT_REPOSITORY}:{key[:12]}"
        if _existing(client, tag, key):
            say(f"{tag} is up to date")
            return tag
        say(f"docker build {tag} (network none)")
        started = time.monotonic()
        context = _context(cache, wheel, deps, repo)
        try:
            stages = _docker_build(client, context, tag, base, key)
        finally:
            shutil.rmtree(context, ignore_errors=True)
        say(f"built {tag} in {time.monotonic() - started:.0f}s")
        # The stage that installed Holon is in the image as /opt/holon; its own layers (the
        # wheels) would stay behind untagged.
        for stage in stages:
            _remove(client, stage)
        _prune(client, DEFAULT_REPOSITORY, KEEP_IMAGES)
        _prune(client, BASE_REPOSITORY, KEEP_IMAGES)
        return tag


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agent_image.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, metavar="DIR")
    parser.add_argument("--tag", metavar="T", help=f"default: {DEFAULT_REPOSITORY}:<input hash>")
    args = parser.parse_args(argv)
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env()
    except DockerException as exc:
        print(f"agent image: no Docker engine reachable: {exc}", file=sys.stderr)
        return 1
    try:
        print(build(client, args.cache, args.tag))
    except (ImageUnavailable, DockerException) as exc:
        print(f"agent image: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
