"""The table of op semantics: op name -> function, filled by the ``ops_*`` modules.

A semantics function receives the running tile block, the op and its operand values, and
returns the list of result values (or a ``Control`` to leave enclosing regions). Which
ops exist comes from ``nanotile.ir.optable.OPS``; a test checks every executable op has an
entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SEMANTICS: dict[str, Callable[..., Any]] = {}

# Items of a module, and terminators handled directly by the block runner.
NOT_EXECUTED = frozenset({"module", "entry", "global"})
TERMINATORS = frozenset({"yield", "continue", "break", "return"})


def semantics(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the semantics of each op in ``names``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            SEMANTICS[name] = fn
        return fn

    return register


@dataclass(slots=True)
class Control:
    """A terminator leaving a region: kind is yield/continue/break/return."""

    kind: str
    values: list
