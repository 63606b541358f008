"""The prompts an engine is given, compiled from layers (holon/agent/templates/):

(a) the common contract: the sandbox, the outputs, headless, the tools, honesty;
(b) each skill's instructions: `prompt.md.j2` in its folder, rendered in jinja2's sandbox (a
    repository's skill folder is not Holon's code) with the skill's inputs and the goal, else the
    skill's description;
(c) the context: what `<input>/context/` holds and each file's text as delimited untrusted data
    (holon/agent/context.py);
(d) the goal, and the caller's own `<input>/prompts/system.md` and `user.md` when given.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from holon.agent.context import DELIMITER, read_context
from holon.contract.layout import CONTEXT_DIR, PROMPTS_DIR
from holon.contract.spec import Spec
from holon.errors import InvalidInput
from holon.fsutil import read_regular_at
from holon.markdown import clean
from holon.skills.catalog import Skill
from holon.skills.prompt import render_prompt
from holon.templating import render

SKILL_PROMPT = "prompt.md.j2"
MAX_SKILL_PROMPT = 256 * 1024
MAX_CALLER_PROMPT = 4 * 1024 * 1024
MAX_INPUT_VALUE = 2000
_INPUT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):\s?(.*)$")


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str


def _read_optional(directory: Path, name: str, limit: int, what: str) -> str | None:
    """A file's UTF-8 text, None when absent; never through a link."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        raw = read_regular_at(dir_fd, name, limit)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidInput(f"{what}: {exc}") from None
    finally:
        os.close(dir_fd)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{what}: not UTF-8 text") from None


def caller_prompts(input_dir: Path) -> tuple[str | None, str | None]:
    """The runner-provided `prompts/system.md` and `prompts/user.md`, when present."""
    prompts = input_dir / PROMPTS_DIR
    return (
        _read_optional(prompts, "system.md", MAX_CALLER_PROMPT, "prompts/system.md"),
        _read_optional(prompts, "user.md", MAX_CALLER_PROMPT, "prompts/user.md"),
    )


def skill_inputs(skill: Skill, spec: Spec, caller_user: str | None) -> dict[str, str]:
    """The values of the skill's declared inputs: the caller's `name: value` lines (the form the
    executor writes to user.md), the goal's issue id for `issue` / `pull_request`."""
    declared = {i.name for i in skill.inputs}
    values: dict[str, str] = {}
    for line in (caller_user or "").splitlines():
        match = _INPUT_LINE.match(line.strip())
        if match and match.group(1) in declared:
            values.setdefault(match.group(1), match.group(2).strip())
    issue = spec.goal.issue_id
    for name in ("issue", "pull_request"):
        if name in declared and name not in values and issue:
            values[name] = issue
    return {k: " ".join(clean(v).split())[:MAX_INPUT_VALUE] for k, v in values.items()}


def skill_instructions(skill: Skill, spec: Spec, inputs: Mapping[str, str]) -> str:
    """The skill's own prompt, rendered in jinja2's sandbox; its description when it has none."""
    if skill.directory is None:
        return skill.description
    where = f"skill {skill.name}: {SKILL_PROMPT}"
    source = _read_optional(skill.directory, SKILL_PROMPT, MAX_SKILL_PROMPT, where)
    if source is None:
        return skill.description
    # One renderer for skill prompts (holon/skills/prompt.py: the immutable sandbox, bounded),
    # the same `inputs`, `goal` and `skill` every shipped template is tested with.
    text = render_prompt(
        source, inputs=inputs, goal=spec.goal.description, skill=skill.name, source=where
    )
    return text.strip()


def compile_prompt(
    *, spec: Spec, skills: list[Skill], input_dir: Path, workspace: Path, output: Path
) -> Prompt:
    """The system and user prompts of a run. InvalidInput names a skill template or a caller
    prompt that cannot be used."""
    caller_system, caller_user = caller_prompts(input_dir)
    instructions = [
        skill_instructions(skill, spec, skill_inputs(skill, spec, caller_user)) for skill in skills
    ]
    context_dir = input_dir / CONTEXT_DIR
    system = render(
        "holon.agent",
        "system.txt.j2",
        "text",
        workspace=str(workspace),
        output=str(output),
        delimiter=DELIMITER,
        instructions=[i for i in instructions if i],
        skill_names=", ".join(s.name for s in skills),
        caller_system=(caller_system or "").strip(),
    )
    user = render(
        "holon.agent",
        "user.txt.j2",
        "text",
        goal=spec.goal.description.strip(),
        issue_id=spec.goal.issue_id,
        caller_user=(caller_user or "").strip(),
        context=read_context(context_dir),
        context_dir=str(context_dir),
        delimiter=DELIMITER,
    )
    return Prompt(system=system, user=user)
