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
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

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
