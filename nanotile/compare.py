"""Comparing an emulated run's outputs with the interpreter's: integers and data movement
exactly, floats to a few ulps of the stored type scaled by the largest expected value
(approximate transcendentals and other summation orders). Shared by the emulated-run tests
and bench/emulator_sweep.py. ``order_explains`` accepts a float reduce/scan result that
the interpreter reproduces when it folds in the spec's sequential order (see below),
``tensor_cores_explain`` an mmaf result that it reproduces summing as the tensor cores do;
``print_difference`` compares printed text (print_tko: interpreter vs vprintf)."""

from __future__ import annotations

import io

import numpy as np

from .ir.array_list import copy_arguments, labelled_outputs

# Relative precision allowed per stored float type (a few ulps): the tolerance of
# --check-semantics for reordered float reductions, shared with it.
from .passes.semantics import RTOL, float_reduction_feeds_output


def assert_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Raise AssertionError (NumPy's message, prefixed by ``what``) when ``got`` differs
    from ``want`` beyond the precision allowed for its dtype."""
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    rtol = RTOL.get(got.dtype, 2 ** -2)  # f8 types: 2-3 mantissa bits
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.nanmax(np.abs(w))) if np.isfinite(w).any() else 1.0
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True,
                               err_msg=what)


def first_difference(got: list, want: list, what: str) -> str | None:
    """Compare the array arguments of two runs (the element arrays of list arguments
    too); the first mismatch's message, or None."""
    for (label, g), (_, w) in zip(labelled_outputs(got), labelled_outputs(want)):
        try:
            assert_close(g, w, f"{what}, {label}")
        except AssertionError as e:
            return str(e).strip()
    return None


# --------------------------------------------------------------------------------------
# Reductions in another legal order
#
# The spec leaves the order in which reduce and scan combine elements unspecified. The
# interpreter combines by a pairwise tree (float sums of f16/bf16 in float32, rounded once);
# the PTX back end folds sequentially. For kernels whose outputs depend on a float reduce
# or scan, a result that differs from the interpreter's is still right when it is what the
# interpreter computes in the back end's order: the spec's fold, acc = body(x[k], acc) from
# the identity, every step rounded with the body's own rounding mode. No tolerance is
# widened: the emulated run must match that second interpreter run to the usual ulps, so
# a wrong rounding direction (add.rm for add.rp, a narrowing cvt.rn after add.rp.f32) is
# still a mismatch.
#
# Why any order is legal, and what a legal result looks like (checked against exact
# rational sums for the cutile-tests sums, tests/targets/test_emulated_run.py): in any
# order each rounded partial sum errs by at most one rounding of its magnitude, so
# |result - exact| <= (n - 1) * eps * sum|x| (n elements, eps the element type's machine
# epsilon). With rounding<positive_inf> every partial sum is >= its exact value
# (RU(a' + b') >= a' + b' >= a + b by induction), so the result is >= the exact sum in
# every order; rounding<negative_inf>: <=. For f16/bf16 computed in f32, RU_16(RU_f32(y))
# = RU_16(y) because the f16/bf16 values are f32 values, so a back end must narrow with
# the op's direction too; round-to-nearest through f32 is exact for f16/bf16 (f32 has at
# least 2p + 2 bits).

def fold_order_run(module, kernel: str, grid, args: list) -> list:
    """The interpreter's results (copies of ``args``) with reduce and scan folded in the
    spec's sequential order."""
    import io

    from .interp import run as interp_run
    from .interp.ops_tile import fold_order

    out = copy_arguments(args)
    with fold_order():
        interp_run(module, kernel, grid, *out, out=io.StringIO())
    return out


def order_explains(module, kernel: str, grid, args: list, got: list, what: str) -> bool:
    """Whether ``got`` (an emulated run on ``args``, which must be the inputs) differs
    from the interpreter only by the order of float reductions: the kernel's outputs
    depend on a float reduce/scan and the interpreter folding in the spec's order gives
    ``got`` to the usual precision."""
    (entry,) = [e for e in module.entries() if e.attributes["sym_name"] == kernel]
    if not float_reduction_feeds_output(entry):
        return False
    return first_difference(got, fold_order_run(module, kernel, grid, args), what) is None


# --------------------------------------------------------------------------------------
# mmaf summed as the tensor cores sum
#
# The spec does not say how mmaf rounds its sums; the interpreter adds exactly and rounds
# once. Hopper's tensor cores truncate every product below the largest term of each
# instruction and round toward zero (nanotile.ptxemu.tensor_core_sums, measured on an
# H200), and wgmma keeps only 13 bits of FP8 sums: a kernel whose mmaf runs on them may
# differ from the interpreter by more than a few ulps and still be what the hardware
# computes. The interpreter with mmaf summed instruction by instruction in K order, as
# the back end issues them (tensor_core_sums.mmaf_total), gives that result; the
# emulated run must match it to the usual ulps.

def tensor_core_run(module, kernel: str, grid, args: list, instruction: str,
                    fold: bool = False) -> list:
    """The interpreter's results (copies of ``args``) with mmaf summed as ``instruction``
    sums (and reduce/scan folded in the spec's order with ``fold``)."""
    import contextlib

    from .interp import run as interp_run
    from .interp.ops_tile import fold_order, mmaf_sums
    from .ptxemu.tensor_core_sums import mmaf_total

    out = copy_arguments(args)
    with mmaf_sums(mmaf_total(instruction)), \
            (fold_order() if fold else contextlib.nullcontext()):
        interp_run(module, kernel, grid, *out, out=io.StringIO())
    return out


def tensor_cores_explain(module, kernel: str, grid, args: list, got: list, what: str) -> bool:
    """Whether ``got`` (an emulated run on ``args``, the inputs) differs from the
    interpreter only as the tensor cores round mmaf's sums: the kernel has a float mmaf
    and the interpreter summing as wgmma or as mma.sync instructions (with reductions
    also in the spec's order, where one feeds an output) gives ``got`` to the usual
    precision."""
    from .ptxemu.tensor_core_sums import instructions_to_try

    (entry,) = [e for e in module.entries() if e.attributes["sym_name"] == kernel]
    instructions = instructions_to_try(entry)
    fold = float_reduction_feeds_output(entry)
    return any(first_difference(got, tensor_core_run(module, kernel, grid, args,
                                                     instruction, fold), what) is None
               for instruction in instructions)


# --------------------------------------------------------------------------------------
# Printed text


class PrintLog(io.StringIO):
    """A text stream that also keeps each ``write`` apart: the interpreter writes once
    per print_tko per tile block, the emulator once per vprintf (one per CTA)."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []

    def write(self, s: str) -> int:
        self.chunks.append(s)
        return super().write(s)


def print_difference(got: PrintLog, want: PrintLog, what: str) -> str | None:
    """None when both printed the same text, or the same prints in another order of tile
    blocks (the spec leaves that order unspecified); else where they first differ."""
    if got.getvalue() == want.getvalue() or sorted(got.chunks) == sorted(want.chunks):
        return None
    a, b = got.getvalue(), want.getvalue()
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (f"{what}: printed text differs at character {k}: "
            f"{a[max(k - 20, 0):k + 40]!r} (emulated) vs {b[max(k - 20, 0):k + 40]!r}")
