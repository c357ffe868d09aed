"""Lab 6: dead-code elimination over a PTX kernel's control-flow graph (your code).

``DeadCode`` is a PTX pass with the interface of nanotile's ``ptx-dead-code``
(nanotile/targets/ptx/passes/kernel_pass.py: ``run_on_kernel`` edits one kernel in place
and says whether it changed anything). The grader runs nanotile's PTX pipeline with your
pass in the place of ``ptx-dead-code`` and checks that every kernel still stores exactly
the same bytes, then counts the instructions your pass removed (``nanotile lab check 6``).

An instruction is dead when it has no effect but writing registers (``flow.is_pure``) and
none of the registers it writes is *live* after it: read later on some path before being
written again. Liveness is a backward data-flow problem over the basic blocks of the
kernel (``flow.kernel_cfg``); loops make it a fixed point.

What you may use (read them): nanotile/targets/ptx/ir.py (``Instr``, ``defs``, ``uses``,
``PtxKernel.body``) and nanotile/targets/ptx/passes/flow.py (``kernel_cfg``, ``Block``,
``is_pure``). What you write yourself: the liveness analysis. The grader refuses a file
that imports nanotile's (``flow.live_out``, ``flow.liveness``, ``flow.live_ranges``) or
its dead-code pass (passes/dead_code.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

# (the names unused so far are for your code: F401 is silenced until you use them)
from nanotile.targets.ptx.ir import BodyItem, Instr, PtxKernel, defs, uses  # noqa: F401
from nanotile.targets.ptx.passes.flow import Block, Cfg, is_pure, kernel_cfg  # noqa: F401
from nanotile.targets.ptx.passes.kernel_pass import KernelPass


def block_summary(body: list[BodyItem], block: Block) -> tuple[set[str], set[str]]:
    """Step 2. ``(read_first, written)`` of one block: the registers the block reads
    before any instruction of the block has certainly written them, and the registers
    it certainly writes. Only ``Instr`` items matter (labels and comments do not).

    Careful with guards: ``@%p1 mov.f32 %f2, %f1`` reads ``%p1`` and ``%f1``, and it may
    or may not write ``%f2``, so it does not count as a certain write."""
    raise NotImplementedError("block_summary: step 2 of the handout")


def live_at_block_ends(cfg: Cfg, body: list[BodyItem]) -> list[set[str]]:
    """Step 3. For each block (``cfg.blocks``, in order): the registers live at its end,
    that is live at the start of one of its successors (``block.succs``). Iterate until
    nothing changes: a loop's back edge makes a block its own (indirect) successor."""
    raise NotImplementedError("live_at_block_ends: step 3 of the handout")


def remove_dead_code(kernel: PtxKernel) -> bool:
    """Steps 4 and 5. Remove the dead instructions of ``kernel.body``; True if any went.

    Walk each block backwards from the registers live at its end, deciding for every
    instruction whether it is dead, and updating the live set as you go. Removing an
    instruction can make the ones that computed its operands dead too: repeat until a
    round removes nothing. ``kernel_cfg`` returns None for a kernel whose branches it
    cannot follow: leave such a kernel alone."""
    return False  # TODO: the starter removes nothing (the grader runs, and scores 0 cuts)


@dataclass(frozen=True)
class DeadCode(KernelPass):
    """Remove pure instructions whose destination registers are dead (your liveness)."""

    name: ClassVar[str] = "ptx-dead-code"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return remove_dead_code(kernel)
