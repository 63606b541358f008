"""Test images built on this machine from Debian's busybox-static: no registry is ever contacted.

The busybox binary is taken from the package (apt-get download + dpkg-deb -x) once and cached
under `.cache/` in the repository; images are tagged by a hash of their contents, so they are
rebuilt only when the agent scripts change.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "test-images"
AGENTS = REPO / "tests" / "agents"

DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN mkdir -p /tmp && chmod 1777 /tmp
COPY agents/ /agents/
ENTRYPOINT ["/bin/sh", "/agents/agent.sh"]
"""


class ImageUnavailable(RuntimeError):
    pass


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, check=False)


def busybox_binary() -> Path:
    target = CACHE / "busybox"
    if target.is_file():
        return target
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise ImageUnavailable("busybox-static needs apt-get and dpkg-deb (a Debian-based machine)")
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        work = Path(tmp)
        os.chmod(work, 0o777)
        proc = _run(["apt-get", "download", "busybox-static"], work)
        if proc.returncode != 0:
            # A fresh machine may have no package lists yet.
            _run(["apt-get", "update", "-qq"], work)
            proc = _run(["apt-get", "download", "busybox-static"], work)
        debs = list(work.glob("busybox-static_*.deb"))
        if proc.returncode != 0 or not debs:
            detail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise ImageUnavailable(f"cannot fetch busybox-static: {detail}")
        _run(["dpkg-deb", "-x", str(debs[0]), str(work / "x")], work)
        binary = work / "x" / "bin" / "busybox"
        if not binary.is_file():
            raise ImageUnavailable("busybox-static package has no bin/busybox")
        shutil.copy2(binary, work / "busybox")
        os.replace(work / "busybox", target)
    return target


def _context() -> tuple[bytes, str]:
    """A tar build context and a tag derived from its contents."""
    busybox = busybox_binary()
    buf = io.BytesIO()
    digest = hashlib.sha256(DOCKERFILE.encode())
    with tarfile.open(fileobj=buf, mode="w") as tar:

        def add(name: str, data: bytes, mode: int) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))
            digest.update(name.encode() + data)

        add("Dockerfile", DOCKERFILE.encode(), 0o644)
        add("busybox", busybox.read_bytes(), 0o755)
        for script in sorted(AGENTS.iterdir()):
            add(f"agents/{script.name}", script.read_bytes(), 0o755)
    return buf.getvalue(), "holon-test-agent:" + digest.hexdigest()[:12]


def build_agent_image(client: object) -> str:
    """Build (or reuse) the busybox test agent image with the docker SDK; return its tag."""
    from docker.errors import ImageNotFound

    data, tag = _context()
    images = client.images  # type: ignore[attr-defined]
    try:
        images.get(tag)
        return tag
    except ImageNotFound:
        pass
    images.build(fileobj=io.BytesIO(data), custom_context=True, tag=tag, rm=True, pull=False)
    return tag
