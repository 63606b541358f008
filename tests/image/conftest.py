"""The agent image built from local parts (scripts/agent_image.py), once per test session."""

from __future__ import annotations

import os
from typing import Any

import pytest

from scripts import agent_image


@pytest.fixture(scope="session")
def holon_image(docker_client: Any) -> str:
    """The tag of the agent image the top-level Dockerfile makes on a debootstrapped Debian base;
    cached under .cache/agent-image/, so only a session with changed inputs builds it again."""
    try:
        return agent_image.build(docker_client)
    except agent_image.ImageUnavailable as exc:
        if os.environ.get("HOLON_REQUIRE_DOCKER") == "1":
            pytest.fail(f"HOLON_REQUIRE_DOCKER=1 but the agent image cannot be built: {exc}")
        pytest.skip(f"the agent image cannot be built here: {exc}")
