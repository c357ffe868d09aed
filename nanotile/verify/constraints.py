"""Generic rules driven by per-op tables: operand/result type constraints and the
"all of {a, b} have same type/shape/rank" traits.

``OPERAND_TYPES``/``RESULT_TYPES`` give, per op of ``optable.OPS`` and per operand group
or result, the constraint its type must meet (None: any type). ``TRAITS`` lists the
cross-operand agreements. Both are keyed by op name; a test checks that every op of the
op table has an entry. Messages are MLIR's ODS messages, as the reference tests expect
them: ``operand #0 must be tile of f16 or bf16 or f32 or f64 values, but got '...'``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nanotile.ir.core import Operation, Value
from nanotile.ir.optable import lookup
from nanotile.ir.types import (
    ElementType,
    GatherScatterViewType,
    PartitionViewType,
    PointerType,
    StridedViewType,
    TensorViewType,
    TileType,
    TokenType,
    Type,
)

from .engine import fail, group, mlir_type, result_named

# Element type sets, in the order the reference's messages list them.
INT = ("i1", "i8", "i16", "i32", "i64")
BASE_FLOAT = ("f16", "bf16", "f32", "f64")
FLOAT = BASE_FLOAT + ("tf32", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
NUMBER = INT + FLOAT
# Types newer than the reference's dialect source (13.4): accepted wherever the widest
# float set is, not named in messages.
_EXTRA_FLOAT = ("f8E5M3FNU",)


@dataclass(frozen=True)
class Constraint:
    summary: str  # what the message says the type must be
    test: Callable[[Type], bool]
    variadic: bool = False

    def message_summary(self) -> str:
        return f"variadic of {self.summary}" if self.variadic else self.summary


def _element_name(t: Type) -> str | None:
    if isinstance(t, ElementType):
        return t.name
    if isinstance(t, PointerType):
        return "ptr"
    return None


def tile_of(elements: tuple[str, ...], *, what: str = "tile", ranks: tuple[int, ...] = (),
            accept_extra: bool = False) -> Constraint:
    """``tile of A or B values`` (``0D tile of ...`` when ranks are fixed)."""
    names = " or ".join("Pointer type" if e == "ptr" else e for e in elements)
    prefix = "/".join(f"{r}D" for r in ranks) + " " + what if ranks else what
    allowed = set(elements) | (set(_EXTRA_FLOAT) if accept_extra else set())

    def test(t: Type) -> bool:
        if not isinstance(t, TileType):
            return False
        if ranks and t.rank not in ranks:
            return False
        return _element_name(t.element) in allowed
    return Constraint(f"{prefix} of {names} values", test)


def variadic(c: Constraint) -> Constraint:
    return Constraint(c.summary, c.test, True)


TILE = tile_of(NUMBER + ("ptr", "i4"), accept_extra=True)
TILE = Constraint("tile of any type values", TILE.test)  # any element type
INT_TILE = tile_of(INT)
I1_TILE = tile_of(("i1",))
I8_TILE = tile_of(("i8",))
I64_TILE = tile_of(("i64",))
BASE_FLOAT_TILE = tile_of(BASE_FLOAT)
FLOAT_TILE = tile_of(FLOAT, accept_extra=True)
NUMBER_TILE = tile_of(NUMBER, accept_extra=True)
PTR_TILE = tile_of(("ptr",))
INT_OR_I4_TILE = tile_of(INT + ("i4",))
PACKABLE_TILE = tile_of(NUMBER + ("i4",), accept_extra=True)
SCALAR_I1 = tile_of(("i1",), ranks=(0,))
SCALAR_I32 = tile_of(("i32",), ranks=(0,))
SCALAR_INT = tile_of(INT, ranks=(0,))
SCALAR_PTR = tile_of(("ptr",), ranks=(0,))
TOKEN = Constraint("cuda tile token type", lambda t: isinstance(t, TokenType))
TENSOR_VIEW = Constraint("tensor view type", lambda t: isinstance(t, TensorViewType))
TILE_VIEW = Constraint("TileView instance", lambda t: isinstance(
    t, PartitionViewType | StridedViewType | GatherScatterViewType))
PARTITION_VIEW = Constraint("partition view type", lambda t: isinstance(t, PartitionViewType))
STRIDED_VIEW = Constraint("strided view type", lambda t: isinstance(t, StridedViewType))
GATHER_VIEW = Constraint("gather/scatter view type",
                         lambda t: isinstance(t, GatherScatterViewType))
MMAF_OPERAND = tile_of(("f16", "bf16", "f32", "f64", "tf32", "f8E4M3FN", "f8E5M2"),
                       what="mmaf operand tile type")
MMAF_RESULT = tile_of(("f16", "f32", "f64"), what="mmaf acc/result tile type")
MMAI_OPERAND = tile_of(("i8",), what="mmai operand tile type")
MMAI_RESULT = tile_of(("i32",))
SCALED_OPERAND = tile_of(("f8E4M3FN", "f8E5M2", "f4E2M1FN"),
                         what="mmaf_scaled operand tile type")
SCALED_SCALE = tile_of(("f8E4M3FN", "f8E8M0FNU"), what="mmaf_scaled scale tile type")
SCALED_RESULT = tile_of(("f32",), what="mmaf_scaled result tile type")

_B, _I, _F = BASE_FLOAT_TILE, INT_TILE, FLOAT_TILE

# Per op: constraints of the operand groups, in op-table order (None = unconstrained).
OPERAND_TYPES: dict[str, tuple[Constraint | None, ...]] = {}
# Per op: constraints of the results, in op-table order.
RESULT_TYPES: dict[str, tuple[Constraint | None, ...]] = {}


def _ops(names: str, operands: tuple, results: tuple) -> None:
    for name in names.split():
        OPERAND_TYPES[name] = operands
        RESULT_TYPES[name] = results


_ops("absi negi", (_I,), (_I,))
_ops("addi andi divi maxi mini muli ori remi shli shri subi xori mulhii", (_I, _I), (_I,))
_ops("absf ceil cos cosh exp exp2 floor log log2 negf rsqrt sin sinh sqrt tan tanh",
     (_B,), (_B,))
_ops("addf divf maxf minf mulf remf subf atan2 fpowf", (_B, _B), (_B,))
_ops("fpowi", (_B, _I), (_B,))
_ops("fma", (_B, _B, _B), (_B,))
_ops("cmpi", (_I, _I), (I1_TILE,))
_ops("cmpf", (_B, _B), (I1_TILE,))
_ops("bitcast", (NUMBER_TILE,), (NUMBER_TILE,))
_ops("exti trunci", (INT_OR_I4_TILE,), (INT_OR_I4_TILE,))
_ops("ftof", (_F,), (_F,))
_ops("ftoi", (_F,), (_I,))
_ops("itof", (_I,), (_F,))
_ops("int_to_ptr", (I64_TILE,), (PTR_TILE,))
_ops("ptr_to_int", (PTR_TILE,), (I64_TILE,))
_ops("ptr_to_ptr", (PTR_TILE,), (PTR_TILE,))
_ops("broadcast permute reshape", (TILE,), (TILE,))
_ops("cat", (TILE, TILE), (TILE,))
_ops("constant", (), (NUMBER_TILE,))
_ops("extract", (TILE, variadic(SCALAR_I32)), (TILE,))
_ops("insert", (TILE, TILE, variadic(SCALAR_I32)), (TILE,))
_ops("iota", (), (_I,))
_ops("offset", (PTR_TILE, _I), (PTR_TILE,))
_ops("select", (I1_TILE, TILE, TILE), (TILE,))
_ops("pack", (PACKABLE_TILE,), (I8_TILE,))
_ops("unpack", (I8_TILE,), (PACKABLE_TILE,))
_ops("mmaf", (MMAF_OPERAND, MMAF_OPERAND, MMAF_RESULT), (MMAF_RESULT,))
_ops("mmai", (MMAI_OPERAND, MMAI_OPERAND, MMAI_RESULT), (MMAI_RESULT,))
_ops("mmaf_scaled", (SCALED_OPERAND, SCALED_OPERAND, SCALED_RESULT, SCALED_SCALE,
                     SCALED_SCALE), (SCALED_RESULT,))
_ops("reduce scan", (variadic(TILE),), (variadic(TILE),))
_ops("make_tensor_view", (SCALAR_PTR, variadic(SCALAR_INT), variadic(SCALAR_INT)),
     (TENSOR_VIEW,))
_ops("make_partition_view", (TENSOR_VIEW,), (PARTITION_VIEW,))
_ops("make_strided_view", (TENSOR_VIEW,), (STRIDED_VIEW,))
_ops("make_gather_scatter_view", (TENSOR_VIEW,), (GATHER_VIEW,))
_ops("get_index_space_shape", (TILE_VIEW,), (variadic(SCALAR_INT),))
_ops("get_tensor_shape", (TENSOR_VIEW,), (variadic(SCALAR_INT),))
_ops("load_ptr_tko", (PTR_TILE, I1_TILE, NUMBER_TILE, TOKEN), (TILE, TOKEN))
_ops("store_ptr_tko", (PTR_TILE, TILE, I1_TILE, TOKEN), (TOKEN,))
_ops("load_view_tko", (TILE_VIEW, variadic(_I), TOKEN), (TILE, TOKEN))
_ops("store_view_tko", (TILE, TILE_VIEW, variadic(_I), TOKEN), (TOKEN,))
_ops("alloca", (), (SCALAR_PTR,))
_ops("get_global", (), (SCALAR_PTR,))
_ops("atomic_cas_tko", (PTR_TILE, TILE, TILE, I1_TILE, TOKEN), (TILE, TOKEN))
_ops("atomic_rmw_tko", (PTR_TILE, TILE, I1_TILE, TOKEN), (TILE, TOKEN))
_ops("atomic_red_view_tko", (TILE_VIEW, variadic(_I), TILE, TOKEN), (TOKEN,))
_ops("make_token", (), (TOKEN,))
_ops("join_tokens", (variadic(TOKEN),), (TOKEN,))
_ops("gdc_launch_dependents_tko gdc_wait_tko", (TOKEN,), (TOKEN,))
_ops("memory_fence_alias_tko", (TOKEN,), (TOKEN,))
_ops("if", (SCALAR_I1,), (None,))
_ops("for", (SCALAR_INT, SCALAR_INT, SCALAR_INT, None), (None,))
_ops("loop", (None,), (None,))
_ops("break continue return yield", (None,), ())
_ops("assert", (I1_TILE,), ())
_ops("module entry global", (), ())
_ops("get_num_tile_blocks get_tile_block_id", (), (SCALAR_I32, SCALAR_I32, SCALAR_I32))
_ops("assume", (None,), (None,))
_ops("print_tko", (variadic(TILE), TOKEN), (TOKEN,))

# Cross-operand agreements, in the order the reference checks them:
# (kind, names). kind: "type" | "shape" | "rank" | "element" (AllXMatch traits).
TRAITS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {}


def _traits(names: str, *traits: tuple[str, tuple[str, ...]]) -> None:
    for name in names.split():
        TRAITS[name] = traits


_SR = ("type", ("source", "result"))
_LRR = ("type", ("lhs", "rhs", "result"))
_traits("absf absi", _SR, ("same_shape", ()))
_traits("addi addf andi divf divi maxf maxi minf mini muli mulf ori shli shri subf subi "
        "xori remf", _LRR)
_traits("remi", ("type", ("result", "lhs", "rhs")), ("shape", ("result", "lhs", "rhs")))
_traits("cos cosh ceil exp exp2 floor log log2 negi negf sin sinh sqrt rsqrt tan tanh", _SR)
_traits("assume", ("type", ("value", "result")))
_traits("atan2", ("type", ("x", "y", "result")))
_traits("mulhii", ("type", ("x", "y", "result")))
_traits("fpowf", ("type", ("result", "source", "exponent")),
        ("rank", ("source", "exponent", "result")))
_traits("fpowi", ("type", ("source", "result")), ("shape", ("source", "exponent", "result")))
_traits("fma", ("type", ("lhs", "rhs", "acc", "result")))
_traits("atomic_cas_tko", ("shape", ("pointers", "cmp", "val", "result")),
        ("type", ("cmp", "val", "result")))
_traits("atomic_rmw_tko", ("shape", ("pointers", "arg", "result")),
        ("type", ("arg", "result")))
_traits("bitcast int_to_ptr ptr_to_int ptr_to_ptr", ("shape", ("source", "result")))
_traits("broadcast", ("rank", ("source", "result")), ("same_element", ()))
_traits("cat", ("rank", ("lhs", "rhs", "result")), ("element", ("lhs", "rhs", "result")))
_traits("cmpf cmpi", ("type", ("lhs", "rhs")), ("i1_result", ()))
_traits("mmaf mmai", ("type", ("acc", "result")), ("element", ("lhs", "rhs")),
        ("rank", ("lhs", "rhs", "acc")))
_traits("mmaf_scaled", ("type", ("acc", "result")), ("element", ("lhs", "rhs")),
        ("element", ("lhs_scale", "rhs_scale")),
        ("rank", ("lhs", "rhs", "acc", "lhs_scale", "rhs_scale")))
_traits("extract", ("rank", ("source", "result")))
_traits("exti ftof ftoi trunci itof", ("shape", ("from", "to")))
_traits("for", ("type", ("lowerBound", "upperBound", "step")),
        ("type", ("initValues", "resultValues")))
_traits("offset", ("type", ("result", "ptr")), ("same_shape", ()))
_traits("pack unpack", ("rank", ("source", "result")))
_traits("permute", ("element", ("source", "result")), ("rank", ("source", "result")))
_traits("reduce scan", ("same_operand_shape", ()))
_traits("reshape", ("same_element", ()))
_traits("select", ("type", ("val_if_true", "val_if_false", "result")),
        ("shape", ("cond", "val_if_true", "val_if_false", "result")))


# ---------------------------------------------------------------------------------


def _values(op: Operation, name: str) -> list[Value]:
    vals = group(op, name)
    if vals:
        return vals
    d = lookup(op.name)
    if d is not None and d.results and any(r.name == name and r.variadic for r in d.results):
        return list(op.results)
    r = result_named(op, name)
    return [r] if r is not None else []


def _check_types(op: Operation) -> None:
    d = lookup(op.name)
    if d is None:
        return
    operand_cs = OPERAND_TYPES.get(op.name, ())
    groups = op.operand_groups() if op.operand_segments is not None else None
    index = 0
    for i, od in enumerate(d.operands):
        c = operand_cs[i] if i < len(operand_cs) else None
        vals = groups[i] if groups is not None and i < len(groups) else group(op, od.name)
        for v in vals:
            if c is not None and not c.test(v.type):
                raise fail(f"operand #{index} must be {c.message_summary()}, but got "
                           f"'{mlir_type(v.type)}'")
            index += 1
    result_cs = RESULT_TYPES.get(op.name, ())
    for i, r in enumerate(op.results):
        c = result_cs[min(i, len(result_cs) - 1)] if result_cs else None
        if c is not None and not c.test(r.type):
            raise fail(f"result #{i} must be {c.message_summary()}, but got "
                       f"'{mlir_type(r.type)}'")


def _shape(t: Type) -> tuple[int, ...] | None:
    return t.shape if isinstance(t, TileType) else None


def _element(t: Type) -> Type | None:
    return t.element if isinstance(t, TileType) else None


def _check_trait(op: Operation, kind: str, names: tuple[str, ...]) -> None:
    listed = "{" + ", ".join(names) + "}"
    if kind in ("type", "shape", "rank", "element"):
        values = [[v.type for v in _values(op, n)] for n in names]
        present = [v for v in values if v]
        if len(present) < 2:
            return
        if kind == "type":
            if any(v != present[0] for v in present):
                raise fail(f"failed to verify that all of {listed} have same type")
            return
        flat = [t for v in present for t in v]
        if kind == "shape":
            keys = [_shape(t) for t in flat]
            what = "have same shape"
        elif kind == "rank":
            keys = [len(s) if (s := _shape(t)) is not None else None for t in flat]
            what = "have same rank"
        else:
            keys = [_element(t) for t in flat]
            what = "have the same element type"
        if any(k != keys[0] for k in keys):
            raise fail(f"failed to verify that all of {listed} {what}")
        return
    tiles = [v.type for v in list(op.operands) + list(op.results)
             if isinstance(v.type, TileType)]
    if kind == "same_shape":
        if any(t.shape != tiles[0].shape for t in tiles):
            raise fail("requires the same shape for all operands and results")
    elif kind == "same_operand_shape":
        if not op.operands:  # MLIR's verifySameOperandsShape asks for one first
            raise fail("expected 1 or more operands, but found 0")
        shapes = [v.type.shape for v in op.operands if isinstance(v.type, TileType)]
        if any(s != shapes[0] for s in shapes):
            raise fail("requires the same shape for all operands")
    elif kind == "same_element":
        if any(t.element != tiles[0].element for t in tiles):
            raise fail("requires the same element type for all operands and results")
    elif kind == "i1_result":
        lhs, res = op.operands[0].type, op.results[0].type if op.results else None
        if (isinstance(lhs, TileType) and isinstance(res, TileType)
                and (res.shape != lhs.shape or _element_name(res.element) != "i1")):
            raise fail("failed to verify that Result type has i1 element type and same "
                       "shape as operands")


# Regions that must hold exactly one block (ODS SizedRegion<1>), by op: region names.
SINGLE_BLOCK_REGIONS: dict[str, tuple[str, ...]] = {
    "entry": ("body",), "testing$func": ("body",), "for": ("region",),
    "loop": ("region",), "if": ("thenRegion",), "reduce": ("body",), "scan": ("body",),
}


def _check_regions(op: Operation) -> None:
    for i, name in enumerate(SINGLE_BLOCK_REGIONS.get(op.name, ())):
        blocks = op.regions[i].blocks if i < len(op.regions) else []
        if len(blocks) != 1:
            raise fail(f"region #{i} ('{name}') failed to verify constraint: region with 1 "
                       "blocks")


# Attributes the reference gives a default although the op table lists none.
_IMPLIED_DEFAULTS = {("ftoi", "rounding_mode"), ("reduce", "identities"),
                     ("scan", "identities"), ("scan", "reverse")}


# Integer attributes of a confined kind (ODS ConfinedAttr): the test, the constraint's words
_NON_NEGATIVE_I32 = (lambda v: v >= 0,
                     "32-bit signless integer attribute whose value is non-negative")
_AT_LEAST_0_I64 = (lambda v: v >= 0,
                   "64-bit signless integer attribute whose minimum value is 0")
_CONFINED = {("reduce", "dim"): _NON_NEGATIVE_I32, ("scan", "dim"): _NON_NEGATIVE_I32,
             ("alloca", "num_elem"): _AT_LEAST_0_I64, ("alloca", "alignment"): _AT_LEAST_0_I64}


def _check_attributes(op: Operation) -> None:
    """Attributes that must be present (no default, not optional), of the right enum and
    within their confined range."""
    d = lookup(op.name)
    if d is None:
        return
    for a in d.attrs:
        value = op.attributes.get(a.name)
        if value is None:
            if a.optional or a.default is not None or a.kind in ("unit", "hints") \
                    or (op.name, a.name) in _IMPLIED_DEFAULTS:
                continue
            raise fail(f"requires attribute '{a.name}'")
        if a.kind == "enum" and a.enum is not None and not isinstance(value, a.enum):
            raise fail(f"attribute '{a.name}' failed to satisfy constraint: "
                       f"{a.enum.__name__}")
        confined = _CONFINED.get((op.name, a.name))
        if confined is not None and not confined[0](value):
            raise fail(f"attribute '{a.name}' failed to satisfy constraint: {confined[1]}")


def _plural(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _check_counts(op: Operation) -> None:
    """Operand, result and region counts against the op table (MLIR's count traits)."""
    d = lookup(op.name)
    if d is None:
        return
    fixed = sum(1 for o in d.operands if o.kind == "single")
    if op.operand_segments is not None:
        if len(op.operand_segments) != len(d.operands) or \
                sum(op.operand_segments) != len(op.operands):
            raise fail(f"operand count ({len(op.operands)}) does not match with the total "
                       f"size ({sum(op.operand_segments)}) specified in attribute "
                       "'operandSegmentSizes'")
        for od, n in zip(d.operands, op.operand_segments):
            if (od.kind == "single" and n != 1) or (od.kind == "optional" and n > 1):
                raise fail(f"operand group '{od.name}' must have "
                           f"{'1 operand' if od.kind == 'single' else 'at most 1 operand'}"
                           f", but found {n}")
    elif d.has_variable_operands:
        if len(op.operands) < fixed:
            raise fail(f"expected {fixed} or more operands, but found {len(op.operands)}")
    elif len(op.operands) != fixed:
        raise fail(f"expected {_plural(fixed, 'operand')}, but found {len(op.operands)}")
    variadic_results = any(r.variadic for r in d.results)
    fixed_results = sum(1 for r in d.results if not r.variadic)
    if variadic_results:
        if len(op.results) < fixed_results:
            raise fail(f"expected {fixed_results} or more results, but found "
                       f"{len(op.results)}")
    elif len(op.results) != fixed_results and not _versioned_result_absent(op, d):
        raise fail(f"expected {_plural(fixed_results, 'result')}, but found "
                   f"{len(op.results)}")
    if len(op.regions) != d.regions and not (op.name == "if" and len(op.regions) == 1):
        raise fail(f"expected {_plural(d.regions, 'region')}, but found {len(op.regions)}")


def _versioned_result_absent(op: Operation, d) -> bool:
    """print_tko read from 13.1 bytecode has no result token (added in 13.2)."""
    newer = [r for r in d.results if r.since != "13.1"]
    return bool(newer) and len(op.results) == len(d.results) - len(newer)


def check_constraints(op: Operation) -> None:
    """The op table's generic checks for one op: counts, attributes, types, regions,
    traits."""
    _check_counts(op)
    _check_attributes(op)
    _check_types(op)
    _check_regions(op)
    for kind, names in TRAITS.get(op.name, ()):
        _check_trait(op, kind, names)
