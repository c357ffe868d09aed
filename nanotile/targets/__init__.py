"""The PTX back end (sm_90a, sm_100a): the passes from the tile stages down to PTX.

Importing this package registers the back end with the pass registry and the language
table of nanotile.passes (as MLIR's tools call ``registerAllPasses``): its languages
(simt, ptx-sm90, ptx-sm100, in ptx/languages.py) and its passes, listed in
``BACKEND_PASSES`` below in pipeline order. nanotile.passes never imports the back end;
the tools that run pipelines import this package first.

The passes (nanotile/passes/pipelines.py runs them in this order; each one file in
ptx/, with its input and output language in its docstring):

- check-target-support{gpu}  types and ops the target lacks: refused, as tileiras does
- lower-constants            dense constants -> global tables and loads (tile-ptr)
- assign-layouts{gpu}        every tile value gets a layout (-> tile-layout)
- vectorize-memory           loads/stores of contiguous aligned elements: vectors
- lower-reductions           a reduce across threads -> register, lane, warp steps
- remove-layout-conversions  cheap values recomputed in the wanted layout, not converted
- lower-convert-layout       conversions: none, a renaming, or through shared memory
- allocate-shared            #shared values get their bytes of the CTA's buffer
- insert-barriers            barriers around shared writes and global writes
- distribute                 tile ops -> per-thread ops (-> simt)
- lower-mma                  warp_mma -> ldmatrix + mma.sync
- lower-wgmma (sm90/)        warpgroup_mma -> descriptors + wgmma.mma_async (sm_90 only)
- lower-tcgen05 (sm100/)     tmem_mma -> TMEM, descriptors + tcgen05.mma (sm_100 only)
- simplify-picks             register renamings read the registers where they were made
- widen-narrow-floats        f16/bf16 arithmetic PTX lacks computed in f32, rounded once
- simt-cse                   identical per-thread ops (owner masks, coordinates) once
- simt-dce                   per-thread values nobody reads removed
- pipeline-k-loops           TMA-fed K loops: copies N-1 iterations ahead in a ring
- select-instructions{gpu}   simt -> PTX (-> ptx-sm90 | ptx-sm100)
- ptx-* (ptx/passes/)        passes over the PTX program
- ptx-sink-tmem-loads (sm100/) wide tcgen05.ld groups read in column chunks where first
                             used (sm_100 only, before ptx-compact-registers)

ptx/layout_rules.py, contiguity.py, mma_plan.py and shared_memory.py hold the rules those
passes share (k_loop_rings.py: which K loops pipeline-k-loops takes, and their rings'
sizes); the layout algebra itself is nanotile/ir/layouts.py. target.py, sm90/ and
sm100/ describe the targets; compile.py runs a target's pipeline and ptxas.

Public API: ``nanotile.targets.compile.compile_to_ptx(module, "sm_90" | "sm_100")`` and
``assemble(ptx, gpu_name)``; the driver exposes them as ``--emit=ptx|cubin``.
"""

from __future__ import annotations

from ..passes.registry import register
from .check_target_support import CheckTargetSupport
from .ptx import languages as _languages  # noqa: F401  (registers simt, ptx-sm90, ptx-sm100)
from .ptx.allocate_shared import AllocateShared
from .ptx.assign_layouts import AssignLayouts
from .ptx.distribute import Distribute
from .ptx.insert_barriers import InsertBarriers
from .ptx.lower_constants import LowerConstants
from .ptx.lower_convert_layout import LowerConvertLayout
from .ptx.lower_mma import LowerMma
from .ptx.lower_reductions import LowerReductions
from .ptx.pipeline_k_loops import PipelineKLoops
from .ptx.passes.coalesce_copies import PtxCoalesceCopies
from .ptx.passes.compact_registers import PtxCompactRegisters
from .ptx.passes.copy_propagation import PtxCopyPropagation
from .ptx.passes.cse import PtxCse
from .ptx.passes.dead_code import PtxDeadCode
from .ptx.passes.fold_address_offsets import PtxFoldAddressOffsets
from .ptx.passes.fold_immediates import PtxFoldImmediates
from .ptx.passes.fold_wide_multiply import PtxFoldWideMultiply
from .ptx.passes.hoist_loop_invariants import PtxHoistLoopInvariants
from .ptx.passes.remove_redundant_barriers import PtxRemoveRedundantBarriers
from .ptx.passes.simplify_arith import PtxSimplifyArith
from .ptx.passes.simplify_branches import PtxSimplifyBranches
from .ptx.passes.strength_reduce import PtxStrengthReduce
from .ptx.remove_layout_conversions import RemoveLayoutConversions
from .ptx.select_instructions import SelectInstructions
from .ptx.select_tma_loads import SelectTmaLoads
from .ptx.select_tma_stores import SelectTmaStores
from .ptx.simplify_picks import SimplifyPicks
from .ptx.simt_cse import SimtCommonSubexpressionElimination
from .ptx.simt_dce import SimtDeadCodeElimination
from .ptx.vectorize_memory import VectorizeMemory
from .ptx.widen_narrow_floats import WidenNarrowFloats
from .sm90.lower_wgmma import LowerWgmma
from .sm100.lower_tcgen05 import LowerTcgen05
from .sm100.sink_tmem_loads import PtxSinkTmemLoads

BACKEND_PASSES = (
    CheckTargetSupport,
    LowerConstants,
    AssignLayouts,
    VectorizeMemory,
    LowerReductions,
    RemoveLayoutConversions,
    LowerConvertLayout,
    AllocateShared,
    InsertBarriers,
    Distribute,
    LowerMma,
    LowerWgmma,
    LowerTcgen05,
    SelectTmaLoads,
    SelectTmaStores,
    SimplifyPicks,
    WidenNarrowFloats,
    SimtCommonSubexpressionElimination,
    SimtDeadCodeElimination,
    PipelineKLoops,
    SelectInstructions,
    PtxFoldImmediates,
    PtxSimplifyArith,
    PtxCopyPropagation,
    PtxCse,
    PtxHoistLoopInvariants,
    PtxStrengthReduce,
    PtxFoldWideMultiply,
    PtxFoldAddressOffsets,
    PtxCoalesceCopies,
    PtxDeadCode,
    PtxRemoveRedundantBarriers,
    PtxSimplifyBranches,
    PtxSinkTmemLoads,
    PtxCompactRegisters,
)

for _pass in BACKEND_PASSES:
    register(_pass)
