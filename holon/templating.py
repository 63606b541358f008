"""Jinja2 environments whose autoescaping suits the output format.

Every `{{ value }}` is escaped for its target (Markdown or plain text) unless the value is
`Trusted`; templates are package data loaded with importlib.resources.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from holon import markdown, terminal

if TYPE_CHECKING:
    import jinja2

Format = Literal["markdown", "text"]


def _finalize_markdown(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, markdown.Trusted):
        return value
    return markdown.inline(str(value))


def _finalize_text(value: Any) -> Any:
    if value is None:
        return ""
    return markdown.plain(str(value))


@cache
def environment(package: str, fmt: Format) -> jinja2.Environment:
    # Imported here: commands that decide without rendering (`holon action` on most events,
    # `holon gateway`) should not pay for jinja2.
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        # Markdown is not HTML: escaping happens in finalize, for the target format.
        autoescape=False,  # noqa: S701
        finalize=_finalize_markdown if fmt == "markdown" else _finalize_text,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        # Package data does not change under a running process: no stat per render to check.
        auto_reload=False,
    )
    env.filters["block"] = markdown.block
    env.filters["code"] = markdown.code
    env.filters["link"] = markdown.link
    env.filters["plain"] = markdown.plain
    env.filters["line"] = terminal.line  # one line: a field that must not start another
    return env


@cache
def template(package: str, name: str, fmt: Format) -> jinja2.Template:
    """The compiled template, looked up once (jinja2's own cache is a bounded LRU)."""
    return environment(package, fmt).get_template(name)


def render(package: str, name: str, fmt: Format, **context: Any) -> str:
    return template(package, name, fmt).render(**context)
