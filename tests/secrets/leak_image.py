"""The busybox image of tests/support/images.py with `agent/leak.sh` as its agent: an agent
that says every secret it can see (tests/secrets/test_docker_secret_hygiene.py). Built locally,
tagged by a hash of its contents, so it is rebuilt only when the script changes."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import Any

from tests.support.images import busybox_binary

AGENT = Path(__file__).resolve().parent / "agent" / "leak.sh"
DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN mkdir -p /tmp && chmod 1777 /tmp
COPY leak.sh /agent/leak.sh
ENTRYPOINT ["/bin/sh", "/agent/leak.sh"]
"""


def build_leak_image(client: Any) -> str:
    """Build (or reuse) the image with the docker SDK; its tag."""
    from docker.errors import ImageNotFound

    files = {
        "Dockerfile": (DOCKERFILE.encode(), 0o644),
        "busybox": (busybox_binary().read_bytes(), 0o755),
        "leak.sh": (AGENT.read_bytes(), 0o755),
    }
    digest = hashlib.sha256()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, (data, mode) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
            digest.update(name.encode() + data)
    tag = "holon-test-leak-agent:" + digest.hexdigest()[:12]
    try:
        client.images.get(tag)
        return tag
    except ImageNotFound:
        pass
    buf.seek(0)
    client.images.build(fileobj=buf, custom_context=True, tag=tag, rm=True, pull=False)
    return tag
