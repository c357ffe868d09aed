"""fold-constants computes what the interpreter computes: for each foldable op, a tiny
kernel ``store(op(a, b))`` is run before and after folding, on edge and random values."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nanotile.ir.core import Block, Module, Region, make_op
from nanotile.ir.enums import (
    ComparisonOrdering,
    ComparisonPredicate,
    MemoryOrderingSemantics,
    RoundingMode,
    Signedness,
)
from nanotile.ir.rewrite import make_splat, numpy_dtype
from nanotile.ir.types import ELEMENT_TYPES, I32, TOKEN, PointerType, TileType
from nanotile.passes.base import PassContext
from nanotile.passes.fold_constants import FoldConstants

from .support import needs_interp

RNG = np.random.default_rng(7)


def build(name: str, element: str, values: list, attrs: dict, out: str) -> Module:
    """entry(%p: ptr<out>) { constants; r = name(constants); store r to %p }"""
    in_type = TileType((), ELEMENT_TYPES[element])
    out_type = TileType((), ELEMENT_TYPES[out])
    block = Block()
    p = block.add_argument(TileType((), PointerType(ELEMENT_TYPES[out if out != "i1" else "i32"])))
    consts = [block.append(make_splat(v, in_type)) for v in values]
    op = block.append(make_op(name, [c.results[0] for c in consts], [out_type], attrs))
    result = op.results[0]
    if out == "i1":  # store booleans as i32 0/1
        ext = block.append(make_op("exti", [result], [TileType((), I32)],
                                   {"signedness": Signedness.unsigned}))
        result = ext.results[0]
    # stored as one-element tiles (the interpreter's rank-0 pointer store is not ready)
    store_type = ELEMENT_TYPES[out if out != "i1" else "i32"]
    ptrs = block.append(make_op("reshape", [p], [TileType((1,), PointerType(store_type))]))
    one = block.append(make_op("reshape", [result], [TileType((1,), store_type)]))
    block.append(make_op("store_ptr_tko", [ptrs.results[0], one.results[0]], [TOKEN],
                         {"memory_ordering_semantics": MemoryOrderingSemantics.weak},
                         operand_segments=[1, 1, 0, 0]))
    block.append(make_op("return", [], []))
    entry = make_op("entry", [], [], {"sym_name": "k"}, [Region([block])])
    block.parent = entry.regions[0]
    return Module(items=[entry])


def run_once(module: Module, out: str):
    from nanotile.interp import run

    element = ELEMENT_TYPES[out if out != "i1" else "i32"]
    buffer = np.zeros(1, numpy_dtype(element))
    run(module, "k", 1, buffer)
    return buffer.tobytes()


def check(name, element, values, attrs, out=None) -> bool:
    out = out or element
    before = run_once(build(name, element, values, attrs, out), out)
    module = build(name, element, values, attrs, out)
    FoldConstants().apply(module, PassContext())
    body = module.items[0].regions[0].block.ops
    folded = not any(op.name == name for op in body)
    assert run_once(module, out) == before, (name, element, values, attrs)
    return folded


def int_values(element: str) -> list[int]:
    width = ELEMENT_TYPES[element].bitwidth
    edges = [0, 1, -1, 2, 7, -7, (1 << (width - 1)) - 1, -(1 << (width - 1))]
    return edges + [int(x) for x in RNG.integers(-(1 << (width - 1)), 1 << (width - 1), 6)]


S, U = Signedness.signed, Signedness.unsigned
INT_CASES = [("addi", {}), ("subi", {}), ("muli", {}), ("andi", {}), ("ori", {}),
             ("xori", {}), ("shli", {}), ("shri", {"signedness": S}),
             ("shri", {"signedness": U}), ("maxi", {"signedness": S}),
             ("mini", {"signedness": U}), ("remi", {"signedness": S}),
             ("remi", {"signedness": U}),
             *[("divi", {"signedness": s, "rounding": r}) for s in (S, U)
               for r in (RoundingMode.zero, RoundingMode.negative_inf,
                         RoundingMode.positive_inf)]]


@needs_interp
@pytest.mark.parametrize("element", ["i8", "i32", "i64"])
@pytest.mark.parametrize("name, attrs", INT_CASES, ids=lambda x: str(x))
def test_integer_binary(name, attrs, element):
    values = int_values(element)
    folded = 0
    for a, b in itertools.islice(itertools.product(values, values), 0, None, 5):
        if name == "divi" and a == -(1 << (ELEMENT_TYPES[element].bitwidth - 1)) and b == -1:
            continue  # overflow: undefined behaviour
        folded += check(name, element, [a, b], dict(attrs))
    assert folded > 0


@needs_interp
@pytest.mark.parametrize("predicate", list(ComparisonPredicate))
@pytest.mark.parametrize("signedness", [S, U])
def test_cmpi(predicate, signedness):
    values = int_values("i32")[:8]
    for a, b in itertools.product(values, values):
        assert check("cmpi", "i32", [a, b], {"comparison_predicate": predicate,
                                             "signedness": signedness}, out="i1")


FLOATS = [0.0, -0.0, 1.5, -2.25, 3e38, 1e-40, float("inf"), float("-inf"), float("nan"),
          0.1, 1 / 3]


@needs_interp
@pytest.mark.parametrize("element", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("name", ["addf", "subf", "mulf", "divf"])
def test_float_binary(name, element):
    rounding = {"rounding_mode": RoundingMode.nearest_even}
    for a, b in itertools.product(FLOATS, FLOATS[:6]):
        assert check(name, element, [a, b], dict(rounding))


@needs_interp
@pytest.mark.parametrize("element", ["f32", "f16"])
def test_float_unary_and_compare(element):
    for a in FLOATS:
        assert check("negf", element, [a], {})
        assert check("absf", element, [a], {})
    for predicate, ordering in itertools.product(ComparisonPredicate, ComparisonOrdering):
        for a, b in itertools.product(FLOATS[::2], FLOATS[::3]):
            assert check("cmpf", element, [a, b], {"comparison_predicate": predicate,
                                                   "comparison_ordering": ordering}, "i1")


@needs_interp
def test_non_default_rounding_is_left_alone():
    assert not check("addf", "f32", [0.1, 0.2], {"rounding_mode": RoundingMode.zero})
    assert not check("divi", "i32", [1, 0], {"signedness": S})
    assert not check("shli", "i32", [1, 40], {})


@needs_interp
@pytest.mark.parametrize("element", ["i8", "i32", "i64"])
@pytest.mark.parametrize("name", ["absi", "negi"])
def test_integer_unary(name, element):
    for a in int_values(element):
        assert check(name, element, [a], {})


@needs_interp
@pytest.mark.parametrize("signedness", [S, U])
def test_extension_and_truncation(signedness):
    for a in int_values("i8"):
        assert check("exti", "i8", [a], {"signedness": signedness}, out="i32")
    for a in int_values("i64"):
        assert check("trunci", "i64", [a], {}, out="i16")
