"""A skill's instructions: its `prompt.md.j2`, rendered in jinja2's immutable sandbox.

A skill folder may be a repository's, which is not Holon's code: its template gets the sandbox
(no attribute starting with `_`, no mutation of what it is given, bounded `range`), only the
variables `inputs`, `goal` and `skill`, and an output cut at MAX_PROMPT_CHARS. Undefined
variables are errors, so a template's typo is found, not rendered as nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from holon.errors import InvalidInput

MAX_PROMPT_CHARS = 256 * 1024


def _environment() -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        # A prompt for a model, not HTML; delimiting untrusted context is the agent's job.
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_prompt(
    template: str, *, inputs: Mapping[str, str], goal: str, skill: str, source: str
) -> str:
    """The rendered instructions; InvalidInput naming `source` when the template is broken or
    tries to leave the sandbox."""
    try:
        compiled = _environment().from_string(template)
        out: list[str] = []
        size = 0
        for chunk in compiled.generate(inputs=dict(inputs), goal=goal, skill=skill):
            size += len(chunk)
            if size > MAX_PROMPT_CHARS:
                raise InvalidInput(f"{source}: renders to more than {MAX_PROMPT_CHARS} characters")
            out.append(chunk)
    except SecurityError as exc:
        raise InvalidInput(f"{source}: refused by the template sandbox ({exc})") from None
    except jinja2.TemplateSyntaxError as exc:
        raise InvalidInput(
            f"{source}: template syntax error at line {exc.lineno}: {exc.message}"
        ) from None
    except jinja2.TemplateError as exc:
        raise InvalidInput(f"{source}: cannot render ({exc.message or exc})") from None
    except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError) as exc:
        # What the template's own expressions raise (`1/0`, a range past the sandbox's bound).
        raise InvalidInput(f"{source}: cannot render ({exc.__class__.__name__}: {exc})") from None
    return "".join(out)
