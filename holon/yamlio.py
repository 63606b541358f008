"""The one way Holon reads YAML a user wrote (a spec, a policy): PyYAML's safe loader, stricter.

Every problem is a `yaml.YAMLError` with a mark, so the caller reports it as one line naming the
line and column:

- A key given twice in one mapping is refused (PyYAML keeps the last silently): `goal:` twice
  in a spec would run a goal the reader of the file never saw first. Merge keys (`<<: *base`)
  may still be overridden, as YAML intends.
- Integers past Python's digit limit, and dates Python cannot hold (`0000-01-01`), are refused
  instead of raising ValueError.
- A string holding a lone surrogate escape (`"\\ud800"`) is refused: it cannot be written as UTF-8.
- Aliases expanding past `MAX_NODES` nodes ("billion laughs"), or an alias inside itself, are
  refused before anything is built from them.

`load` and `load_document` parse with libyaml when PyYAML has it (about ten times faster: the
built-in skills and policy are parsed by every `holon action`), building the data with the same
Python constructor and resolver; any error there is left to PyYAML's own parser, which reports
it (or accepts the text) exactly as it always has.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

try:
    from yaml._yaml import CParser

    LIBYAML = True
except ImportError:  # PyYAML built without libyaml: its own parser only
    LIBYAML = False

# A spec or policy of 1 MiB holds well under this many nodes written out; only aliases go past it.
MAX_NODES = 1_000_000
_MERGE = "tag:yaml.org,2002:merge"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_expansion(root: Node, max_nodes: int = MAX_NODES) -> None:
    """ConstructorError if `root`, with every alias expanded, has more than `max_nodes` nodes or
    holds itself. Iterative, each node sized once: cheap however the aliases are nested."""
    sizes: dict[int, int] = {}
    on_path = -1
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        children = _children(node)
        if done:
            size = 1 + sum(sizes[id(child)] for child in children)
            if size > max_nodes:
                raise ConstructorError(
                    None,
                    None,
                    f"aliases expand past {max_nodes} nodes",
                    node.start_mark,
                )
            sizes[id(node)] = size
            continue
        if id(node) in sizes:
            continue  # sized already, reached again through an alias
        sizes[id(node)] = on_path
        stack.append((node, True))
        for child in children:
            if sizes.get(id(child)) == on_path:
                raise ConstructorError(
                    None, None, "an alias refers to a node that contains it", child.start_mark
                )
            if id(child) not in sizes:
                stack.append((child, False))


class StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader refusing what Holon cannot use faithfully (see the module docstring)."""

    def construct_document(self, node: Node) -> Any:
        check_expansion(node)
        return super().construct_document(node)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):  # the base class refuses anything else with a mark
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # unhashable: the base class says so with its own mark
                if duplicate:
                    shown = repr(key) if len(repr(key)) <= 60 else repr(key)[:57] + "..."
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {shown}",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)

    def construct_scalar(self, node: ScalarNode | MappingNode) -> Any:
        value = super().construct_scalar(node)
        if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
            raise ConstructorError(
                None, None, "a string holds a lone surrogate escape", node.start_mark
            )
        return value

    def construct_yaml_int(self, node: ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # past the digit limit of int(): "Exceeds the limit (4300 digits)"
            raise ConstructorError(
                None, None, "integer too long (over 4300 digits)", node.start_mark
            ) from None

    def construct_yaml_timestamp(self, node: ScalarNode) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError):  # year 0, month 13
            raise ConstructorError(
                None, None, "date or time out of range", node.start_mark
            ) from None


StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)
StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_yaml_timestamp)


_WITH_LIBYAML: dict[type[StrictLoader], type[StrictLoader]] = {}


def _with_libyaml(loader: type[StrictLoader]) -> type[StrictLoader] | None:
    """`loader` with libyaml's parser and composer (its constructor and resolver unchanged)."""
    if not LIBYAML:
        return None
    found = _WITH_LIBYAML.get(loader)
    if found is None:

        class Fast(CParser, loader):  # type: ignore[misc, valid-type]
            def __init__(self, stream: str) -> None:
                CParser.__init__(self, stream)
                SafeConstructor.__init__(self)
                Resolver.__init__(self)

        found = _WITH_LIBYAML[loader] = Fast
    return found


# libyaml composes without Python recursion, PyYAML's composer recurses a few frames per level
# and gives up (RecursionError: "nested too deeply") a few hundred levels down. Deeper than this,
# PyYAML's parser decides, so such a document is refused (or not) exactly as before.
FAST_DEPTH = 64


class _TooDeep(Exception):
    pass


def _deeper_than(root: Node, limit: int) -> bool:
    stack: list[tuple[Node, int]] = [(root, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if id(node) in seen:
            continue  # an alias: its node is measured where it is defined
        seen.add(id(node))
        stack.extend((child, depth + 1) for child in _children(node))
    return False


def _parse(loader: type[StrictLoader], text: str, fast: bool = False) -> tuple[Node | None, Any]:
    parser = loader(text)
    try:
        node = parser.get_single_node()
        if fast and node is not None and _deeper_than(node, FAST_DEPTH):
            raise _TooDeep
        return node, parser.construct_document(node) if node is not None else None
    finally:
        parser.dispose()


def load_document(text: str, loader: type[StrictLoader] = StrictLoader) -> tuple[Node | None, Any]:
    """The node tree and the data of the one document in `text` (None, None when empty), as
    `yaml.load(text, Loader=loader)` gives the data. Raises what PyYAML's own parser raises."""
    fast = _with_libyaml(loader)
    if fast is not None:
        try:
            return _parse(fast, text, fast=True)
        except Exception:  # noqa: S110 - PyYAML's own parser below says what is wrong, as before
            pass
    return _parse(loader, text)


def load(text: str, loader: type[StrictLoader] = StrictLoader) -> Any:
    """`yaml.load(text, Loader=loader)`, through libyaml when present (see `load_document`)."""
    return load_document(text, loader)[1]
