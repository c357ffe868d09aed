"""Passes over the ptx stages (ptx-sm90 -> ptx-sm90; they also run on ptx-sm100 modules):
each edits ``module.ptx`` (a nanotile.targets.ptx.ir.PtxProgram) in place, one kernel at a
time (kernel_pass.KernelPass). One pass per file; flow.py holds the control-flow and
data-flow analyses they share.

``PIPELINE`` is the order the default pipeline runs them in: constants and copies are
propagated first, so that CSE sees identical instructions; CSE leaves copies behind for a
second copy propagation; loop invariants leave their loops; a second round catches what
the first exposed; the widening and address folds then see the final operands; the copies
that remain between registers that never clash are coalesced; dead code goes after all
of them; barriers, branches and register numbers are tidied last.

ptx-hoist-loop-invariants runs between the rounds (the second CSE merges what it hoisted
with equal code before the loop) within a register-pressure budget: hoisting everything
made ptxas spill on matmul_f16 (see its docstring).
"""

STEPS = [
    "ptx-fold-immediates", "ptx-simplify-arith", "ptx-copy-propagation", "ptx-cse",
    "ptx-copy-propagation",
    "ptx-hoist-loop-invariants",
    # second round: constants and identities the first round exposed (0 + x after
    # propagation), and the repeats they (and the hoisting) make identical
    "ptx-fold-immediates", "ptx-simplify-arith", "ptx-copy-propagation", "ptx-cse",
    "ptx-copy-propagation",
    "ptx-strength-reduce", "ptx-fold-wide-multiply", "ptx-fold-address-offsets",
    "ptx-coalesce-copies",
    "ptx-dead-code",
    "ptx-remove-redundant-barriers", "ptx-simplify-branches", "ptx-compact-registers",
]
PIPELINE = ",".join(STEPS)
