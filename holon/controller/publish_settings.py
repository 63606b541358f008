"""`settings.publish`: what publishing a settled run may do (docs/policy.md, "Publishing"), the
knobs of `holon.github.publish.PublishPolicy` as a policy file sets them.

Strict: unknown keys, `yes` for a boolean, `"300"` for a number are refused, each in one line
naming its place. A branch template holds only the placeholders `{kind}` and `{number}`, must
hold `{number}` (one branch per subject), and must render a branch Holon pushes to
(holon/refnames.py) for every subject kind and number; it is refused, never repaired.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from holon.refnames import MAX_BRANCH, branch_problem
from holon.size import parse_size

MIB = 1024 * 1024
PLACEHOLDERS = ("{kind}", "{number}")
KINDS = ("issue", "pull_request")  # PublishRequest.kind
NUMBERS = (1, 2**31 - 1)  # GitHub numbers issues with 32-bit integers
_BRACED = re.compile(r"\{[^{}]*\}")


def _shown(text: str) -> str:
    """Untrusted text in a one-line error: escaped (no newline survives repr), bounded."""
    return repr(text if len(text) <= 60 else text[:60] + "...")


def template_problem(template: str) -> str | None:
    """Why `template` is no branch template; None when every branch it renders is fine."""
    if len(template) > MAX_BRANCH:
        return f"must have at most {MAX_BRANCH} characters"
    for found in _BRACED.findall(template):
        if found not in PLACEHOLDERS:
            return f"unknown placeholder {_shown(found)}: use {{kind}} and {{number}}"
    bare = template
    for placeholder in PLACEHOLDERS:
        bare = bare.replace(placeholder, "")
    if "{" in bare or "}" in bare:
        return "a `{` or `}` that is no placeholder"
    if "{number}" not in template:
        return "must hold {number}: each issue gets its own branch"
    for kind in KINDS:
        for number in NUMBERS:
            # As holon.github.publish_names.branch_for renders it: plain substitution.
            name = template.replace("{kind}", kind).replace("{number}", str(number))
            problem = branch_problem(name)
            if problem is not None:
                return f"renders {_shown(name)}, which is no branch Holon pushes to: it {problem}"
    return None


def _size(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a size such as 10m")
    if isinstance(value, str):
        return parse_size(value)
    return value  # an int is checked by the field; anything else is refused by it


class PublishSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    branch_template: str = "holon/{kind}-{number}"
    # `.github/workflows/` changes; the token must then hold the `workflows` permission too.
    allow_workflow_changes: bool = False
    co_author: Literal["none", "actor"] = "actor"  # the asker as `Co-authored-by:`
    link: Literal["fixes", "refs"] = "fixes"  # `Fixes #n` closes the issue on merge
    draft: bool = True
    max_files: int = Field(default=300, ge=1, le=3000)
    max_patch_bytes: int = Field(default=10 * MIB, ge=1, le=100 * MIB)
    max_bytes: int = Field(default=50 * MIB, ge=1, le=500 * MIB)

    @field_validator("branch_template")
    @classmethod
    def _template(cls, value: str) -> str:
        problem = template_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("max_patch_bytes", "max_bytes", mode="before")
    @classmethod
    def _sizes(cls, value: Any) -> Any:
        return _size(value)
