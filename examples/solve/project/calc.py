"""A tiny calculator: the demo project, with the bug its issue reports."""


def add(a: int, b: int) -> int:
    """The sum of a and b."""
    return a - b


def mul(a: int, b: int) -> int:
    """The product of a and b."""
    return a * b
