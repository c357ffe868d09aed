"""Semantics of whole-tile computations: reduce, scan, mmaf, mmai, mmaf_scaled.

reduce/scan: the body combines an element with an accumulator (region arguments
``(element_0, accumulator_0, element_1, accumulator_1, ...)``). Bodies that are one
known op of the two arguments (addf, maxf, addi, andi, ...) run as one NumPy reduction
or accumulation. Any other body runs on whole tiles: a pairwise tree for reduce and a
Hillis-Steele doubling scan for scan, calling the body on tile-sized operands (its ops
are elementwise, so they accept any shape). Both rely only on the associativity the spec
requires. The identity is combined once: ``result = body(reduced, identity)`` (the same
value as the spec's fold, by associativity).

Float sums of f16/bf16 run in float32 and are rounded once at the end (more accurate
than a device tree of f16 additions; the spec leaves the order unspecified).

``fold_order()`` (a context manager) switches to the spec's sequential fold instead:
``acc = identity; acc = body(x[k], acc)`` for k in order (scan: every acc kept), each step
rounded to the element type. The comparison of emulated runs uses it to tell a result
that only combines in another legal order from a wrong one (nanotile.compare).

mmaf: products and sums in float64 (exact products for every type below f64), added to
the accumulator and rounded once to the accumulator's type (a device accumulates in at
least f32, rounding along the way; results agree to the accumulator's precision); tf32
operands are first rounded to tf32. ``mmaf_sums(total)`` (a context manager) has mmaf
compute ``total(a, b, c, operand types)`` instead: the comparison of emulated runs passes
the tensor cores' own sums (nanotile.compare.tensor_core_run) to tell a result that only
rounds as the hardware does from a wrong one.
mmai: exact in int64, wrapped to i32. mmaf_scaled: each scale (f8E8M0FNU or f8E4M3FN)
multiplies a block of K/Ks consecutive elements along K, then as mmaf.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..ir.core import Block, Operation
from ..ir.enums import RoundingMode, Signedness
from ..ir.types import ElementType
from .dtypes import from_float, round_tf32, scalar_attr, signed, to_compute, unsigned, wrap
from .errors import InterpError
from .registry import semantics

_FOLD = [False]  # fold_order() active
_MMAF_SUM = [None]  # mmaf_sums(total) active: total


@contextlib.contextmanager
def mmaf_sums(total):
    """Within ``with mmaf_sums(total):`` mmaf on float operands computes ``total(a, b, c,
    kind_a, kind_b)``: a (..., M, K), b (..., K, N) and the accumulator c (..., M, N) as
    float64 values (tf32 operands rounded), the kinds the operands' type names; it
    returns the sums (float32 or float64), which are rounded to the accumulator's type."""
    was, _MMAF_SUM[0] = _MMAF_SUM[0], total
    try:
        yield
    finally:
        _MMAF_SUM[0] = was


class fold_order:
    """Within ``with fold_order():`` reduce and scan combine elements in the spec's
    sequential order, one body call per element, starting from the identity."""

    def __enter__(self) -> None:
        self._was = _FOLD[0]
        _FOLD[0] = True

    def __exit__(self, *exc) -> None:
        _FOLD[0] = self._was

# --------------------------------------------------------------------------------------
# Recognising simple bodies


def _simple_body(block: Block) -> Operation | None:
    """The one op of a body ``(a, b) { r = op a, b; yield r }`` with no special flags."""
    if len(block.arguments) != 2 or len(block.ops) != 2:
        return None
    op, term = block.ops
    if term.name != "yield" or len(term.operands) != 1 or term.operands[0] is not op.results[0]:
        return None
    if set(op.operands) != set(block.arguments) or len(op.operands) != 2:
        return None
    if op.attributes.get("flush_to_zero") or op.attributes.get("rounding_mode", RoundingMode.nearest_even) \
            != RoundingMode.nearest_even:
        return None
    return op


def _ufunc(op: Operation, t: ElementType):
    """(ufunc, view function) computing the body op over a whole axis, or None."""
    name = op.name
    if t.is_float:
        if name == "addf":
            return np.add, None
        if name == "mulf":
            return np.multiply, None
        if name in ("maxf", "minf"):
            if op.attributes.get("propagate_nan"):
                return (np.maximum if name == "maxf" else np.minimum), None
            return (np.fmax if name == "maxf" else np.fmin), None
        return None
    is_signed = op.attributes.get("signedness", Signedness.signed) == Signedness.signed
    view = signed if is_signed else unsigned
    table = {"addi": (np.add, signed), "muli": (np.multiply, signed),
             "andi": (np.bitwise_and, unsigned), "ori": (np.bitwise_or, unsigned),
             "xori": (np.bitwise_xor, unsigned), "maxi": (np.maximum, view),
             "mini": (np.minimum, view)}
    return table.get(name)


def _wide(a: np.ndarray, t: ElementType, view) -> np.ndarray:
    v = view(a, t)
    return v.astype(np.uint64) if v.dtype.kind == "u" else v.astype(np.int64)


def _fast(fn_view, t: ElementType, x: np.ndarray, axis: int, scan: bool) -> np.ndarray:
    fn, view = fn_view
    if t.is_float:
        c = to_compute(x, t)
        r = fn.accumulate(c, axis=axis) if scan else fn.reduce(c, axis=axis)
        return from_float(r, t)
    w = _wide(x, t, view)
    r = fn.accumulate(w, axis=axis) if scan else fn.reduce(w, axis=axis)
    return wrap(r, t)


# --------------------------------------------------------------------------------------
# The general path: run the body on whole tiles


def _combine(tb, block: Block, earlier: list, later: list) -> list:
    args = []
    for e, l_ in zip(earlier, later):
        args += [l_, e]  # (element, accumulator)
    ended = tb.run_block(block, args)
    return [np.asarray(v) for v in ended.values]


def _identities(op: Operation, xs: list) -> list:
    ids = op.attributes["identities"]
    ids = getattr(ids, "elements", ids)  # a tuple, or an ArrayAttr
    return [scalar_attr(a, v.type.element) for a, v in zip(ids, op.operands)]


def _tree_reduce(tb, block: Block, xs: list, axis: int) -> list:
    return _tree(tb, block, [np.moveaxis(x, axis, -1) for x in xs])


def _tree(tb, block: Block, xs: list) -> list:
    """Reduce the last axis by a pairwise tree, keeping earlier elements on the left."""
    n = xs[0].shape[-1]
    if n == 1:
        return [x[..., 0] for x in xs]
    if n % 2:
        head = _tree(tb, block, [x[..., :-1] for x in xs])
        return _combine(tb, block, head, [x[..., -1] for x in xs])
    # Neighbours pair up ((x0, x1), (x2, x3), ...), so the order of operands is kept.
    combined = _combine(tb, block, [x[..., 0::2] for x in xs], [x[..., 1::2] for x in xs])
    return _tree(tb, block, [np.broadcast_to(c, x[..., 0::2].shape)
                             for c, x in zip(combined, xs)])


def _doubling_scan(tb, block: Block, xs: list, axis: int) -> list:
    xs = [np.moveaxis(x, axis, -1) for x in xs]
    n = xs[0].shape[-1]
    step = 1
    while step < n:
        combined = _combine(tb, block, [x[..., :n - step] for x in xs],
                            [x[..., step:] for x in xs])
        xs = [np.concatenate([x[..., :step], np.broadcast_to(c, x[..., step:].shape)], -1)
              for x, c in zip(xs, combined)]
        step *= 2
    return [np.moveaxis(x, -1, axis) for x in xs]


def _with_identity(tb, block: Block, xs: list, identities: list) -> list:
    out = _combine(tb, block, identities, xs)
    return [np.broadcast_to(o, x.shape).astype(x.dtype) for o, x in zip(out, xs)]


def _fold(tb, block: Block, xs: list, ids: list, axis: int, scan: bool) -> list:
    """The spec's sequential fold along ``axis`` (all partial results for a scan)."""
    xs = [np.moveaxis(x, axis, -1) for x in xs]
    acc = [np.broadcast_to(np.asarray(i, x.dtype), x.shape[:-1]) for i, x in zip(ids, xs)]
    steps = []
    for k in range(xs[0].shape[-1]):
        acc = [np.broadcast_to(a, x.shape[:-1]).astype(x.dtype)
               for a, x in zip(_combine(tb, block, acc, [x[..., k] for x in xs]), xs)]
        steps.append(acc)
    if not scan:
        return acc
    return [np.moveaxis(np.stack([s[i] for s in steps], -1), -1, axis)
            for i in range(len(xs))]


@semantics("reduce")
def _reduce(tb, op: Operation, args: list) -> list:
    axis = op.attributes["dim"]
    block = op.regions[0].block
    ids = _identities(op, args)
    if _FOLD[0]:
        return _fold(tb, block, list(args), ids, axis, scan=False)
    body = _simple_body(block) if len(args) == 1 else None
    t = op.operands[0].type.element
    fast = _ufunc(body, t) if body is not None else None
    if fast is not None:
        reduced = [_fast(fast, t, args[0], axis, scan=False)]
    else:
        reduced = _tree_reduce(tb, block, list(args), axis)
    return _with_identity(tb, block, reduced, ids)


@semantics("scan")
def _scan(tb, op: Operation, args: list) -> list:
    axis = op.attributes["dim"]
    reverse = bool(op.attributes.get("reverse", False))
    block = op.regions[0].block
    ids = _identities(op, args)
    xs = [np.flip(x, axis) if reverse else x for x in args]
    body = _simple_body(block) if len(args) == 1 else None
    t = op.operands[0].type.element
    fast = _ufunc(body, t) if body is not None else None
    if _FOLD[0]:
        out = _fold(tb, block, xs, ids, axis, scan=True)
        return [np.flip(x, axis) if reverse else x for x in out]
    if fast is not None:
        out = [_fast(fast, t, xs[0], axis, scan=True)]
    else:
        out = _doubling_scan(tb, block, xs, axis)
    out = _with_identity(tb, block, out, ids)
    return [np.flip(x, axis) if reverse else x for x in out]


# --------------------------------------------------------------------------------------
# Matrix multiply-accumulate


def _mma_operand(a: np.ndarray, t: ElementType, acc_dtype: np.dtype) -> np.ndarray:
    x = to_compute(a, t)
    if t.name == "tf32":
        x = round_tf32(x)
    return x.astype(acc_dtype)


@semantics("mmaf")
def _mmaf(tb, op: Operation, args: list) -> list:
    lhs, rhs, acc = args
    lt, rt, at = (v.type.element for v in op.operands)
    # float64 holds every product of the narrow types exactly, and NumPy's float64
    # matmul is also the fast one here; the sum is rounded once to the accumulator type.
    a, b = _mma_operand(lhs, lt, np.float64), _mma_operand(rhs, rt, np.float64)
    c = to_compute(acc, at).astype(np.float64)
    if _MMAF_SUM[0] is not None:
        return [from_float(np.asarray(_MMAF_SUM[0](a, b, c, lt.name, rt.name), np.float64), at)]
    return [from_float(np.matmul(a, b) + c, at)]


@semantics("mmai")
def _mmai(tb, op: Operation, args: list) -> list:
    lhs, rhs, acc = args
    lt, rt, at = (v.type.element for v in op.operands)

    def view(a, t, attr):
        s = op.attributes.get(attr, Signedness.signed) == Signedness.signed
        return (signed(a, t) if s else unsigned(a, t)).astype(np.int64)

    prod = np.matmul(view(lhs, lt, "signedness_lhs"), view(rhs, rt, "signedness_rhs"))
    return [wrap(prod + signed(acc, at).astype(np.int64), at)]


@semantics("mmaf_scaled")
def _mmaf_scaled(tb, op: Operation, args: list) -> list:
    lhs, rhs, acc, ls, rs = args
    lt, rt, at, lst, rst = (v.type.element for v in op.operands)
    k = lhs.shape[-1]
    if k % ls.shape[-1] or k % rs.shape[-2]:
        raise InterpError(f"{tb.where}: mmaf_scaled scale shapes do not divide K={k}")
    a = to_compute(lhs, lt) * np.repeat(to_compute(ls, lst), k // ls.shape[-1], axis=-1)
    b = to_compute(rhs, rt) * np.repeat(to_compute(rs, rst), k // rs.shape[-2], axis=-2)
    prod = np.matmul(a.astype(np.float64), b.astype(np.float64))
    return [from_float(prod + to_compute(acc, at), at)]
