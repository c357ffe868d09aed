"""The back end's languages: simt (per-thread code) and the PTX programs ptx-sm90 and
ptx-sm100, declared as diffs of tile-layout (nanotile/passes/languages.py) and registered
there when nanotile.targets is imported.

The ptx languages hold a PTX program (``module.ptx``) instead of Tile IR ops; their
invariants read that program. ptx-sm100 extends ptx-sm90, and the ptx passes (written for
ptx-sm90) run on ptx-sm100 modules too (``open_to_extensions``).
"""

from __future__ import annotations

import re

from ...diagnostics import Diagnostic
from ...ir import types as T
from ...ir.core import Module
from ...ir.optable import OPS
from ...passes.languages import TILE_LAYOUT, register_language

# --------------------------------------------------------------------------------------
# Invariants of the ptx languages: they read module.ptx (a targets.ptx.ir.PtxProgram)

_DECLARED_NAME = re.compile(r"\.reg\s+(?:\.v\d+\s+)?\.\w+\s+([^;]+);")


def _ptx_error(module: Module, kernel: str, message: str) -> Diagnostic:
    return Diagnostic("error", f"kernel '{kernel}': {message}",
                      getattr(module.ptx, "filename", "<ptx>"))


def ptx_registers_declared(module: Module) -> list[Diagnostic]:
    """every register an instruction uses is declared in its kernel (a .reg class or name)"""
    from .ir import Instr, register_class

    diags: list[Diagnostic] = []
    for kernel in module.ptx.kernels:
        names = {n.strip() for d in kernel.decls for m in _DECLARED_NAME.finditer(d)
                 for n in m.group(1).split(",")}
        # this check runs after every pass: the registers as one set (each instruction
        # keeps its own list), each judged once, the instructions read again only to
        # name the first user of a register that is not declared
        used = set().union(*[item.all_registers() for item in kernel.body
                             if isinstance(item, Instr)])
        undeclared = {reg for reg in used - names
                      if register_class(reg) not in kernel.reg_types}
        if not undeclared:
            continue
        for item in kernel.body:
            if not isinstance(item, Instr):
                continue
            for reg in item.all_registers():
                if reg in undeclared:
                    undeclared.discard(reg)
                    diags.append(_ptx_error(module, kernel.name, f"register {reg} is used by "
                                                                 f"'{item.render().strip()}' "
                                                                 "but not declared"))
    return diags


def ptx_branch_targets(module: Module) -> list[Diagnostic]:
    """every branch (bra) goes to a label defined in its kernel"""
    from .ir import Instr, Label

    diags: list[Diagnostic] = []
    for kernel in module.ptx.kernels:
        labels = {item.name for item in kernel.body if isinstance(item, Label)}
        for item in kernel.body:
            if isinstance(item, Instr) and item.root == "bra" and item.operands \
                    and item.operands[0] not in labels:
                diags.append(_ptx_error(module, kernel.name, f"'{item.render().strip()}' "
                                                             f"branches to label "
                                                             f"'{item.operands[0]}', which the "
                                                             "kernel does not define"))
    return diags


def _ptx_target_is(gpu: str):
    def ptx_target(module: Module) -> list[Diagnostic]:
        target = getattr(module.ptx, "target", gpu)
        if target != gpu:
            return [Diagnostic("error", f"the PTX program is for {target}, not {gpu}",
                               getattr(module.ptx, "filename", "<ptx>"))]
        return []

    ptx_target.__doc__ = f"the program's .target is {gpu}"
    return ptx_target



# --------------------------------------------------------------------------------------
# Running a module for --check-semantics: the PTX emulator


def run_ptx_module(module: Module, kernel: str, grid, args: list, printed) -> None:
    """Run ``kernel`` of a module in a ptx language in the PTX emulator (arrays of
    ``args`` updated in place, printed text to ``printed``)."""
    from ...ptxemu import run_ptx
    from ...ptxemu.printf import printf_output

    with printf_output(printed):
        run_ptx(module.ptx.render(), kernel, grid=grid, args=args)


def run_simt_module(module: Module, kernel: str, grid, args: list, printed) -> None:
    """Run a simt module: lower a copy the rest of the way (the default pipeline's steps
    after distribute, down to select-instructions) and emulate its PTX: sm_90's steps
    when it holds sm_90a's own ops (wgmma) and none of sm_100a's (tcgen05), else
    sm_100's."""
    import copy

    from ...ir.rewrite import all_ops
    from ...passes.base import PassContext
    from ...passes.pipelines import lower
    from ...passes.registry import parse_pipeline

    names = {op.name for op in all_ops(module)}
    sm90 = not names & SM100_OPS and bool(names & SM90_OPS)
    steps = lower("sm_90", mma="wgmma") if sm90 else lower("sm_100", mma="tcgen05")
    lowered = copy.deepcopy(module)
    for step in parse_pipeline(",".join(steps[steps.index("distribute") + 1:])):
        step.apply(lowered, PassContext())
    run_ptx_module(lowered, kernel, grid, args, printed)


# simt ops only sm_90a selects (lower-wgmma's, targets/sm90)
SM90_OPS = frozenset({"warpgroup_mma", "wgmma_descriptor", "wgmma_mma_async", "wgmma_fence",
                      "wgmma_commit", "wgmma_wait", "fence_proxy_async"})

# simt ops only sm_100a selects (lower-tcgen05's, targets/sm100; fence_proxy_async, which
# both write, is sm_100's where any of these is present)
SM100_OPS = frozenset({"tmem_mma", "tmem_mma_scaled", "tmem_alloc", "tmem_dealloc",
                       "tmem_store", "tmem_load", "tcgen05_descriptor", "tcgen05_mma", "tcgen05_commit_wait",
                       "tcgen05_barrier"})

# --------------------------------------------------------------------------------------
# The languages

def registers_only(module: Module) -> list[Diagnostic]:
    """every tile value is one thread's registers (layout #regs)"""
    from ...ir.layouts import RegisterArray
    from ...ir.rewrite import blocks_of
    from ...passes.language import op_error

    diags = []
    for item in module.items:
        for op in item.walk():
            values = [*op.results, *(a for b in blocks_of(op) for a in b.arguments)]
            for v in values:
                if isinstance(v.type, T.TileType) and \
                        not isinstance(v.type.layout, RegisterArray):
                    diags.append(op_error(op, f"value %{v.name_hint or '?'} of '{op.name}' "
                                              f"is not per-thread registers ({v.type})"))
    return diags


# The cuda_tile ops that mean the same per register: elementwise math, control flow,
# memory through pointers, grid queries; plus simt's own (the op table's internal rows).
_SIMT_OPS = {n for n, d in OPS.items()
             if d.traits & {"elementwise", "control", "terminator"}} \
    | {"constant", "load_ptr_tko", "store_ptr_tko", "atomic_cas_tko", "atomic_rmw_tko",
       "get_tile_block_id", "get_num_tile_blocks", "get_global", "assert", "reduce",
       "scan", "gdc_wait_tko", "gdc_launch_dependents_tko", "memory_fence_alias_tko"}

SIMT = TILE_LAYOUT.extend(
    "simt", "Per-thread code: each value is one thread's registers (tile<8xf32, #regs>);\n"
            "elementwise ops apply per register, reduce/scan fold a thread's registers;\n"
            "thread coordinates, shuffles, shared-memory stores and loads, barriers and\n"
            "structured control flow are explicit.",
    remove_ops=TILE_LAYOUT.ops - _SIMT_OPS,
    remove_extra_ops={"convert_layout", "tma_load", "tma_store"},
    extra_ops={"splat": "every register the same value",
               "pick": "registers chosen from others (a renaming)",
               "coordinates": "the coordinate of the element each register holds",
               "is_owner": "this thread owns its elements (others hold copies)",
               "shuffle_xor": "exchange registers with another lane (shfl.sync.bfly)",
               "shuffle_idx": "read registers of other lanes by a plan (shfl.sync.idx)",
               "shared_store": "write registers to a shared buffer",
               "shared_load": "read registers from a shared buffer",
               "shared_gather": "read shared elements by row-major index",
               "warp_mma": "matrix multiply-accumulate on the tensor cores (lower-mma)",
               "ldmatrix": "load mma fragments from shared memory",
               "mma_sync": "one warp-level mma.sync",
               "warpgroup_mma": "matrix multiply-accumulate on wgmma (sm_90a: lower-wgmma)",
               "wgmma_descriptor": "a wgmma shared-memory matrix descriptor",
               "wgmma_mma_async": "one wgmma.mma_async",
               "wgmma_fence": "wgmma.fence: accumulator registers ready",
               "wgmma_commit": "wgmma.commit_group",
               "wgmma_wait": "wgmma.wait_group",
               "fence_proxy_async": "shared writes visible to the async proxy",
               "tmem_mma": "matrix multiply-accumulate on tcgen05 (sm_100a: lower-tcgen05)",
               "tmem_mma_scaled": "block-scaled multiply-accumulate on tcgen05 "
                                  "(sm_100a: lower-tcgen05)",
               "tmem_alloc": "the CTA's tensor memory (tcgen05.alloc)",
               "tmem_dealloc": "tensor memory freed (tcgen05.dealloc)",
               "tmem_store": "a thread's row of an accumulator to tensor memory",
               "tmem_load": "a thread's row of an accumulator from tensor memory",
               "tcgen05_descriptor": "a tcgen05 shared-memory matrix descriptor",
               "tcgen05_mma": "one tcgen05.mma, issued by thread 0",
               "tcgen05_commit_wait": "tcgen05.commit to an mbarrier, every thread waits",
               "tcgen05_barrier": "tcgen05 fences around a CTA barrier",
               "tma_copy": "TMA copies into a shared buffer, then an mbarrier wait",
               "tma_issue": "TMA copies into one stage of a ring (pipeline-k-loops)",
               "tma_wait": "wait for a ring stage's copies (mbarrier parity)",
               "tma_ring_reset": "a ring's mbarriers initialised again",
               "tma_store_copy": "TMA copies out of a shared buffer, waited for",
               "vprintf": "print from thread 0"},
    remove_invariants={"tiles-have-layouts"},
    add_invariants=[("registers-only", registers_only)],
    tile_level=False, runner=run_simt_module)

# Hopper's warpgroup MMA (PTX ISA 8.0+, sm_90a only: Blackwell has tcgen05 instead).
WGMMA_INSTRUCTIONS = {
    "wgmma.mma_async": "warpgroup MMA, B (and A) read from shared memory by descriptor",
    "wgmma.fence": "accumulator registers ready for wgmma",
    "wgmma.commit_group": "close a group of wgmma.mma_async",
    "wgmma.wait_group": "wait until at most N groups are pending",
    "fence.proxy.async": "shared-memory writes visible to the async proxy"}

# TMA copies and the mbarriers that say when they have landed (PTX ISA 8.0+, sm_90+).
TMA_INSTRUCTIONS = {
    "cp.async.bulk.tensor": "copy a box of a tensor map's tensor into shared memory",
    "cp.reduce.async.bulk.tensor": "reduce a shared box into a tensor map's tensor",
    "mbarrier.init": "make an mbarrier expecting N arrivals",
    "mbarrier.arrive": "arrive on an mbarrier (.expect_tx: and announce bytes to come)",
    "mbarrier.try_wait": "has the phase of that arrival completed?",
    "cvta.param": "the generic address of a kernel parameter (a tensor map)"}

PTX_SM90 = SIMT.extend(
    "ptx-sm90", "Hopper: PTX instructions on virtual registers in basic blocks, printed as\n"
                "PTX text (.target sm_90a); the tensor cores through wgmma.mma_async for\n"
                "f16/bf16, tf32 and f8 matmuls (a warpgroup's operands in shared memory:\n"
                "lower-wgmma) and mma.sync for the others; wgmma's operands, shared vectors\n"
                "and matmul epilogues copied by TMA (cp.async.bulk.tensor, mbarrier waits).\n"
                "The module's program is module.ptx (select-instructions); the invariants\n"
                "read it.",
    remove_ops=SIMT.ops, remove_types=SIMT.types, remove_attrs=SIMT.attrs,
    remove_extra_ops=set(SIMT.extra_ops),  # simt's own ops are gone too
    remove_invariants={name for name, _ in SIMT.invariants},  # those read Tile IR ops
    add_invariants=[("ptx-target", _ptx_target_is("sm_90")),
                    ("ptx-registers-declared", ptx_registers_declared),
                    ("ptx-branch-targets", ptx_branch_targets)],
    extra_ops={"mma.sync": "warp MMA", "ldmatrix.sync": "mma fragments from shared memory",
               "shfl.sync": "lane exchanges", "bar.sync": "CTA barrier", "bra": "branch",
               **WGMMA_INSTRUCTIONS, **TMA_INSTRUCTIONS},
    ptx=True, open_to_extensions=True, runner=run_ptx_module)

# Blackwell's tensor-memory MMA (PTX ISA 8.6+, sm_100a).
TCGEN05_INSTRUCTIONS = {
    "tcgen05.alloc": "allocate tensor-memory columns (address to shared memory)",
    "tcgen05.relinquish_alloc_permit": "no more allocations from this CTA",
    "tcgen05.dealloc": "free tensor-memory columns",
    "tcgen05.mma": "MMA from shared-memory descriptors into tensor memory (one thread)",
    "tcgen05.commit": "an mbarrier arrives when the MMAs issued before are done",
    "tcgen05.st": "registers to tensor memory (32x32b: a warp's 32 lanes)",
    "tcgen05.ld": "tensor memory to registers",
    "tcgen05.wait": "wait::ld / wait::st: this thread's tcgen05.ld/st done",
    "tcgen05.fence": "order tcgen05 operations around a thread barrier",
    "fence.proxy.async": "shared-memory writes visible to the async proxy"}

PTX_SM100 = PTX_SM90.extend(
    "ptx-sm100", "Blackwell: as ptx-sm90 for .target sm_100a (PTX 8.6) without wgmma (the\n"
                 "tensor cores through tcgen05.mma for f16/bf16 matmuls of 128 or 256 rows\n"
                 "on 4 warps, the accumulator in tensor memory: lower-tcgen05; mma.sync for\n"
                 "the others; TMA for their A operands, vectors and epilogues), plus the cvt\n"
                 "forms of the element types only Blackwell has (f4E2M1FN, f8E8M0FNU). The\n"
                 "ptx-sm90 passes run here too (they copy the instructions they do not know).",
    remove_invariants={"ptx-target"},
    add_invariants=[("ptx-target", _ptx_target_is("sm_100"))],
    remove_extra_ops=set(WGMMA_INSTRUCTIONS),
    extra_ops={**TCGEN05_INSTRUCTIONS,
               "cvt.rn.f16x2.e2m1x2": "two f4E2M1FN -> two f16",
               "cvt.rn.satfinite.e2m1x2.f32": "two f32 -> two f4E2M1FN",
               "cvt.rn.bf16x2.ue8m0x2": "two f8E8M0FNU -> two bf16",
               "cvt.rz.satfinite.ue8m0x2.f32": "two f32 -> two f8E8M0FNU (also .rp)"})

for _language in (SIMT, PTX_SM90, PTX_SM100):
    register_language(_language)
