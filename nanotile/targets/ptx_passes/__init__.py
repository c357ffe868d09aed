"""Passes over the ptx stages (ptx-sm90 -> ptx-sm90; they also run on ptx-sm100 modules):
each edits ``module.ptx`` (a nanotile.targets.ptx_ir.PtxProgram) in place. One pass per
file; flow.py holds the control-flow and data-flow analyses they share.

``PIPELINE`` is the order the default pipeline runs them in: constants and copies are
propagated first, so that CSE sees identical instructions; CSE leaves copies behind for a
second copy propagation; a second round catches what the first exposed; the widening and
address folds then see the final operands; dead code goes after all of them; barriers,
branches and register numbers are tidied last.

ptx-hoist-loop-invariants is not in it: on matmul_f16 (255 registers already) the ~100
values it keeps live across the K loop make ptxas spill (8 -> 132 bytes) and the SASS grows
(3648 -> 4024 instructions) although the emulated instruction count drops 7%; ptxas hoists
invariants itself with a register-pressure model. Run it explicitly (-p) where it helps.
"""

STEPS = [
    "ptx-fold-immediates", "ptx-simplify-arith", "ptx-copy-propagation", "ptx-cse",
    "ptx-copy-propagation",
    # second round: constants and identities the first round exposed (0 + x after
    # propagation), and the repeats they make identical
    "ptx-fold-immediates", "ptx-simplify-arith", "ptx-copy-propagation", "ptx-cse",
    "ptx-copy-propagation",
    "ptx-fold-wide-multiply", "ptx-fold-address-offsets", "ptx-dead-code",
    "ptx-remove-redundant-barriers", "ptx-simplify-branches", "ptx-compact-registers",
]
PIPELINE = ",".join(STEPS)
