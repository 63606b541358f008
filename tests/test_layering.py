"""Holon's parts depend on each other one way (docs/architecture.md): no import cycle between them.

A part is a subpackage (`holon.runner`) or a top-level module (`holon.intent`). Every import
counts, including those inside functions: a lazy import still ties the two parts together.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "holon"


def _part(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("holon.")}


def part_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        source = _part(module.removesuffix(".__init__"))
        for target in map(_part, _imports(path)):
            if target != source:
                graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle once, as the path that closes it (depth-first search, colours)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_holons_parts() -> None:
    graph = part_graph()
    assert graph["holon.runner"] >= {"holon.closure", "holon.contract"}  # the walk sees imports
    assert cycles(graph) == []


def test_closure_and_intent_sit_below_their_users() -> None:
    graph = part_graph()
    assert "holon.runner" not in graph["holon.closure"]
    assert "holon.controller" not in graph["holon.executor"]
    assert "holon.controller" not in graph["holon.intent"]
