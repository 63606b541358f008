"""What the repository's policy allows publishing to do: a model of its own, so the serve and
the GitHub edge can hold it without importing publishing (`publish.py`), which a pass that
publishes nothing never needs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from holon.github.neutralize import DEFAULT_DOMAINS, OutputRules

MIB = 1024 * 1024


class PublishPolicy(BaseModel):
    """What the repository's policy allows publishing to do (defaults: the safe choice)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    branch_template: str = "holon/{kind}-{number}"
    allow_workflow_changes: bool = False
    co_author: Literal["none", "actor"] = "actor"
    link: Literal["fixes", "refs"] = "fixes"
    draft: bool = True
    workflow: str = "holon"
    max_files: int = Field(default=300, ge=1, le=3000)
    max_patch_bytes: int = Field(default=10 * MIB, ge=1, le=100 * MIB)
    max_bytes: int = Field(default=50 * MIB, ge=1, le=500 * MIB)
    # The hosts links in what publishing writes may point to (holon/github/neutralize.py);
    # the edge sets the policy's `link_domains` and the repository's own GitHub host.
    link_domains: tuple[str, ...] = DEFAULT_DOMAINS

    @property
    def rules(self) -> OutputRules:
        return OutputRules.of(self.link_domains)


__all__ = ["MIB", "PublishPolicy"]
