"""What the executor asks publishing to do: which subject, which run, on which base."""

from __future__ import annotations

from typing import Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from holon.errors import InvalidInput
from holon.github.errors import PublishError
from holon.github.publish_names import (
    SHA,
    valid_login,
    valid_repo,
    valid_run_id,
    valid_skill,
)
from holon.github.publish_text import Actor
from holon.jsonio import load_object
from holon.refnames import branch_problem
from holon.validation import describe_validation_error

DocT = TypeVar("DocT", bound=BaseModel)


class PublishRequest(BaseModel):
    """`base_sha` is the commit the run started from (`run.json` snapshot `head`; for a pull
    request, the head the run fixed); `base_branch` is where an issue's pull request goes
    (usually the default branch); `title` is the subject's title (untrusted); `actor` who
    asked, for the co-author trailer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str
    kind: Literal["issue", "pull_request"]
    number: int = Field(ge=1)
    title: str = Field(default="", max_length=4096)
    skill: str
    run_id: str
    base_sha: str
    base_branch: str | None = None
    actor: Actor | None = None

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        if not valid_repo(value):
            raise ValueError("must be owner/name")
        return value

    @field_validator("skill")
    @classmethod
    def _skill(cls, value: str) -> str:
        if not valid_skill(value):
            raise ValueError("must be a skill name such as github-issue-solve")
        return value

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, value: str) -> str:
        if not valid_run_id(value):
            raise ValueError("must be a run id (letters, digits, `. _ -`)")
        return value

    @field_validator("base_sha")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not SHA.fullmatch(value):
            raise ValueError("must be a full commit sha")
        return value

    @field_validator("base_branch")
    @classmethod
    def _branch(cls, value: str | None) -> str | None:
        problem = branch_problem(value) if value is not None else None
        if problem:
            raise ValueError(f"branch {problem}")
        return value

    @field_validator("actor")
    @classmethod
    def _actor(cls, value: Actor | None) -> Actor | None:
        if value is not None and not valid_login(value.login):
            raise ValueError("must be a GitHub login")
        return value

    @model_validator(mode="after")
    def _base_branch_for_issue(self) -> Self:
        if self.kind == "issue" and self.base_branch is None:
            raise ValueError("an issue's pull request needs base_branch")
        return self


def read_document(model: type[DocT], raw: bytes, name: str) -> DocT:
    """An agent-written JSON artifact (review.json, replies.json) as `model`; PublishError
    ("bad-input") naming what is wrong, in one line."""
    try:
        return model.model_validate(load_object(raw, name))
    except InvalidInput as exc:
        raise PublishError("bad-input", str(exc)) from None
    except ValidationError as exc:
        raise PublishError("bad-input", describe_validation_error(name, exc)) from None
