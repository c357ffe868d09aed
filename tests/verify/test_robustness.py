"""The verifier reports malformed IR; it never crashes on it.

For every op of the op table, degenerate instances (no operands, wrong operand kinds,
missing results) must produce an error diagnostic, not a Python exception.
"""

from __future__ import annotations

import pytest

from nanotile.ir import types as T
from nanotile.ir.optable import OPS

from .build import Kernel, errors, tile

_TYPES = [T.TOKEN, tile((), "i32"), tile((3, 5), "f32"), T.TensorViewType(
    T.ELEMENT_TYPES["f32"], (8,), (1,))]


def _operand_count(d) -> int:
    return sum(1 for o in d.operands if o.kind == "single")


@pytest.mark.parametrize("name", sorted(n for n in OPS if n not in ("module",)))
def test_degenerate_ops_are_reported_not_crashed(name):
    d = OPS[name]
    n = _operand_count(d)
    for t in _TYPES:
        k = Kernel(t)
        k.op(name, [k.arg(0)] * n, [t] * len(d.results))
        errors(k.module())  # any result is fine, as long as nothing is raised
    k = Kernel()
    k.op(name, [], [])
    if n or d.results or d.regions:
        assert errors(k.module()), f"{name} with no operands/results was accepted"


_POOL = [T.TOKEN, tile((), "i32"), tile((), "i1"), tile((4,), "f16"), tile((4, 4), "f32"),
         tile((2, 4, 4), "i8"), tile((4,), T.PointerType(T.ELEMENT_TYPES["f32"])),
         T.TensorViewType(T.ELEMENT_TYPES["f32"], (None, 4), (4, 1)),
         T.PartitionViewType((4, 4), T.TensorViewType(T.ELEMENT_TYPES["f32"], (None, 4),
                                                      (4, 1)))]


@pytest.mark.parametrize("name", sorted(n for n in OPS if n not in ("module",)))
def test_random_types_never_crash(name):
    import random
    rng = random.Random(name)
    d = OPS[name]
    for _ in range(40):
        n_ops = _operand_count(d) + sum(rng.randint(0, 2) for o in d.operands
                                        if o.kind != "single")
        n_res = len(d.results) + (rng.randint(0, 2) if any(r.variadic for r in d.results)
                                  else 0)
        arg_types = [rng.choice(_POOL) for _ in range(n_ops)]
        k = Kernel(*arg_types)
        k.op(name, [k.arg(i) for i in range(n_ops)],
             [rng.choice(_POOL) for _ in range(n_res)])
        errors(k.module())
