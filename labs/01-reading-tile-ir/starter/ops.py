"""Lab 1: your interpreter rules for six Tile IR ops.

A rule is what nanotile's interpreter runs for an op (compare the project's in
nanotile/interp/ops_*.py, registered in nanotile/interp/registry.py). It is called as

    rule(tb, op, args) -> list of results

- ``tb``: the running tile block (nanotile/interp/machine.py, ``TileBlock``).
  ``tb.machine.debug`` is True under ``nanotile run --debug``; ``tb.run_block(block,
  values)`` runs a block of ops (a region's body) on values for its arguments and
  returns a ``Control`` whose ``values`` are what its ``yield`` gave back.
- ``op``: the operation (nanotile/ir/core.py): ``op.operands`` and ``op.results`` are
  Values with a ``.type`` (a TileType: ``.shape``, ``.element``), ``op.attributes`` a
  dict (e.g. ``op.attributes.get("overflow")``), ``op.regions[0].block`` a body.
- ``args``: one NumPy array per operand, in the operands' order.

Return one NumPy array per result, in the storage dtype of its element type (i32 ->
int32, i1 -> bool, f16 -> float16, bf16 -> ml_dtypes.bfloat16; nanotile/interp/dtypes.py
explains it, and its helpers ``signed``, ``unsigned``, ``wrap``, ``to_compute``,
``from_float`` and ``scalar_attr`` are there for you to use). Never change an argument
array in place: tiles are values.

Write the rules yourself: do not import or call the project's rules (nanotile/interp/
ops_*.py); reading them after you have tried is fine. ``RULES`` at the end is what the
grader installs in place of the project's rules (``nanotile.interp.replaced_semantics``).
"""

from __future__ import annotations

import numpy as np  # noqa: F401 - you will need it

from nanotile.ir.core import Operation


def addi(tb, op: Operation, args: list) -> list:
    """``%r = addi %a, %b [overflow<nsw|nuw|nw>] : tile<...xiN>``: integer addition.

    Integers are signless two's-complement numbers: the sum wraps around modulo 2**N
    (i1 included: true + true is false). The overflow flag promises that no signed (nsw),
    unsigned (nuw) or neither (nw) wrap happens. Outside debug mode a broken promise is
    ignored (the result is the wrapped sum). In debug mode (``tb.machine.debug``) raise
    ``nanotile.interp.InterpError`` when the exact sum, read as the flag says (signed for
    nsw, unsigned for nuw, both for nw), is outside the type's range.
    """
    raise NotImplementedError("addi: write the rule (see the docstring)")


def maxf(tb, op: Operation, args: list) -> list:
    """``%r = maxf %a, %b [flush_to_zero] [propagate_nan] : tile<...xfN>``: the larger.

    - Without ``propagate_nan``: a NaN operand loses (the other operand is the result;
      NaN only if both are NaN). With ``propagate_nan``: NaN if either operand is NaN.
    - +0.0 is greater than -0.0.
    - f16, bf16: compute in float32 and round back to the type (exact for a maximum).
    - ``flush_to_zero`` (f32 only): a subnormal input counts as a zero of its sign.
    The op's attributes hold the flags as ``op.attributes.get("propagate_nan")`` and
    ``op.attributes.get("flush_to_zero")``.
    """
    raise NotImplementedError("maxf: write the rule (see the docstring)")


def select(tb, op: Operation, args: list) -> list:
    """``%r = select %cond, %a, %b``: ``a`` where ``cond`` (an i1 tile) is true, else
    ``b``, element by element (any element type)."""
    raise NotImplementedError("select: write the rule (see the docstring)")


def broadcast(tb, op: Operation, args: list) -> list:
    """``%r = broadcast %a : tile<1x4xf32> -> tile<8x4xf32>``: repeat the size-1
    dimensions of ``a`` to the result's shape (same rank; the result type says the
    shape)."""
    raise NotImplementedError("broadcast: write the rule (see the docstring)")


def reshape(tb, op: Operation, args: list) -> list:
    """``%r = reshape %a : tile<8xi32> -> tile<2x4xi32>``: the same elements in
    row-major order, in the result type's shape (rank 0 included)."""
    raise NotImplementedError("reshape: write the rule (see the docstring)")


def reduce(tb, op: Operation, args: list) -> list:
    """``%r... = reduce %a... dim=D identities=[...]`` with a body: combine the elements
    of each operand along dimension D (the result has that dimension removed).

    The body (``op.regions[0].block``) has two arguments per operand, in the order
    (element_0, accumulator_0, element_1, accumulator_1, ...), and yields the new
    accumulators. The spec's definition is a fold: start each accumulator from its
    identity (``op.attributes["identities"]``, one attribute per operand; turn one into
    an array with ``nanotile.interp.dtypes.scalar_attr(attr, element_type)``), then for
    k = 0, 1, ... run the body on (x[k], acc) and keep what it yields. Run the body with
    ``tb.run_block(block, values)``; its ops run elementwise on whatever shape you give
    them, so a whole slice ``x[..., k]`` can go through at once. Any order of combining
    is allowed for a float body (the spec asks for an associative body), so a few ulps
    of difference from the project's interpreter are accepted there.
    """
    raise NotImplementedError("reduce: write the rule (see the docstring)")


# Op name -> your rule: what the grader installs in place of the project's rules.
RULES = {
    "addi": addi,
    "maxf": maxf,
    "select": select,
    "broadcast": broadcast,
    "reshape": reshape,
    "reduce": reduce,
}
