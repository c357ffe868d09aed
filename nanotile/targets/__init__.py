"""The PTX back end (sm_90a, sm_100a): the passes from tile-layout down to PTX.

Importing this package registers the back end with the pass registry and the language
table of nanotile.passes (as MLIR's tools call ``registerAllPasses``): its languages
(simt, ptx-sm90, ptx-sm100, in ptx/languages.py) and its passes, listed in
``BACKEND_PASSES`` below. nanotile.passes never imports the back end; the tools that run
pipelines import this package first.

Flow: the target's default pipeline (nanotile/passes/pipelines.py: canonicalisation,
then ``lower-views`` -> tile-ptr, ``resolve-tokens`` -> program order, the layout passes,
then the pass ``lower-to-ptx{gpu=...}`` (lower_to_ptx.py), which runs
``lower.compile_module`` and keeps the result as ``module.ptx``, a ptx.ir.PtxProgram that
the PTX passes edit). ``compile_module`` lowers op families to per-thread PTX:

- lower_math.py / lower_convert.py  elementwise arithmetic, math, casts, pointer offsets
- lower_memory.py                   views (if any are left), ld/st/atom/red, memory order
- lower_shared.py                   shared-memory movement: broadcast, permute, cat,
                                    extract, insert, pack/unpack, reduce, scan, mma
- lower_mma.py                      mmaf/mmai on mma.sync (f16, bf16, f8, i8) when the
                                    shape fits; lower_shared's FMA loop otherwise
- lower_control.py                  if / for / loop / break / continue / assert
- lower_print.py                    print_tko -> vprintf
- lower_misc.py, lower_globals.py   constants, iota, grid queries, globals
- rules.py                          op name -> lowering rule (refusals name the op)
- ptx/builder.py                    the PTX builder (registers, labels, kernel text;
                                    shared memory over 48 KB is dynamic: see its docstring)
- ptx/ir.py, ptx/passes/            the PTX program and the passes that edit it
- target.py, sm90/, sm100/          per-architecture headers and flags
- check_target_support.py           types and ops a target lacks: refused first
- assign_layouts.py, allocate_shared.py  tile-ordered -> tile-layout
- lower_to_ptx.py                   the pass from the tile stages to the ptx stages
- compile.py                        compile_to_ptx (runs the pipeline), ptxas_path, assemble

Public API: ``nanotile.targets.compile.compile_to_ptx(module, "sm_90" | "sm_100")`` and
``assemble(ptx, gpu_name)``; the driver exposes them as ``--emit=ptx|cubin``.
"""

from __future__ import annotations

from ..passes.registry import register
from .allocate_shared import AllocateShared
from .assign_layouts import AssignLayouts
from .check_target_support import CheckTargetSupport
from .lower_to_ptx import LowerToPtx
from .ptx import languages as _languages  # noqa: F401  (registers simt, ptx-sm90, ptx-sm100)
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

BACKEND_PASSES = (
    CheckTargetSupport,
    AssignLayouts,
    AllocateShared,
    LowerToPtx,
    PtxFoldImmediates,
    PtxSimplifyArith,
    PtxCopyPropagation,
    PtxCse,
    PtxHoistLoopInvariants,
    PtxFoldWideMultiply,
    PtxFoldAddressOffsets,
    PtxDeadCode,
    PtxRemoveRedundantBarriers,
    PtxSimplifyBranches,
    PtxCompactRegisters,
)

for _pass in BACKEND_PASSES:
    register(_pass)
