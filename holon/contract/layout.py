"""The contract's filesystem boundary and exit codes (RFC-0002 sections 3.1-3.3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath

ENV_INPUT_DIR = "HOLON_INPUT_DIR"
ENV_WORKSPACE_DIR = "HOLON_WORKSPACE_DIR"
ENV_OUTPUT_DIR = "HOLON_OUTPUT_DIR"
ENV_RUN_ID = "HOLON_RUN_ID"
# A run given a model key in a container reaches the model only through the host's key proxy
# (holon/runner/model_proxy.py): HTTP on this unix socket, the key added on the host.
ENV_MODEL_PROXY = "HOLON_MODEL_PROXY"
ENV_MODEL_PROVIDER = "HOLON_MODEL_PROVIDER"  # the provider the proxy serves first
ENV_MODEL_PROXY_OPENAI_ITSELF = "HOLON_MODEL_PROXY_OPENAI_ITSELF"  # "1": upstream is OpenAI's API
CONTAINER_PROXY_DIR = "/holon/proxy"
CONTAINER_PROXY_SOCKET = CONTAINER_PROXY_DIR + "/model.sock"

SPEC_FILE = "spec.yaml"
CONTEXT_DIR = "context"
PROMPTS_DIR = "prompts"
SKILLS_DIR = "skills"  # <input>/skills/<name>/: each skill folder the run uses
MANIFEST_FILE = "manifest.json"
PATCH_FILE = "diff.patch"
# Files the runner itself writes beside the agent's outputs.
RUN_RECORD_FILE = "run.json"
RUN_LOG_FILE = "run.log"


class AgentExit(enum.IntEnum):
    """Agent and `holon run` exit codes (RFC-0002 section 3.3)."""

    SUCCESS = 0
    FAILURE = 1
    NEEDS_HUMAN = 2


@dataclass(frozen=True)
class Layout:
    """Where the three contract directories are, as the agent sees them."""

    input: PurePath
    workspace: PurePath
    output: PurePath

    def env(self) -> dict[str, str]:
        return {
            ENV_INPUT_DIR: str(self.input),
            ENV_WORKSPACE_DIR: str(self.workspace),
            ENV_OUTPUT_DIR: str(self.output),
        }


CONTAINER_LAYOUT = Layout(
    input=PurePosixPath("/holon/input"),
    workspace=PurePosixPath("/holon/workspace"),
    output=PurePosixPath("/holon/output"),
)
