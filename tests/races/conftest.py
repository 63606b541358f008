"""The races' simulated jobs on the one loopback GitHub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.races.scenario import Steps
from tests.support.actions_env import ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub


@pytest.fixture
def steps(github_server: LoopbackGitHub, tmp_path: Path) -> Steps:
    """`steps(name, **ActionsEnv kwargs)`: a new simulated job on the one fake."""

    def make(name: str = "job", **kw: Any) -> ActionsEnv:
        return ActionsEnv(tmp_path, github_server, name=name, **kw)

    return make
