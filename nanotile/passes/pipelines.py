"""The default pipelines, one per target, read top to bottom.

Both targets share the tile-level passes and the back end's (nanotile/targets); they
differ where a pass takes the target as its option: check-target-support, eqsat's cost
model, assign-layouts (the CTA size of the num_warps hint, the mma.sync forms the
target's PTX has, and on sm_90 ``mma=wgmma``: sm_90a's warpgroup MMA where it fits,
expanded by lower-wgmma, a pass only sm_90 runs; on sm_100 ``mma=tcgen05``: sm_100a's
tensor-memory MMA, expanded by lower-tcgen05, a pass only sm_100 runs) and
select-instructions (the PTX header: .target sm_90a, PTX 8.4 / .target sm_100a, PTX 8.6; and the rules a target adds to the shared selection,
``Target.select_overrides``: sm_100's cvt forms for f4E2M1FN and f8E8M0FNU in
targets/sm100/select_convert.py). The module's program is then ``module.ptx`` (language ptx-sm90
or ptx-sm100), and the PTX passes, written for ptx-sm90, run on both; sm_100 adds
ptx-sink-tmem-loads (targets/sm100: a 256-column accumulator read from tensor memory in
chunks where the epilogue uses them) before the last of them.
``compile_to_ptx`` (targets/compile.py) and ``nanotile FILE --emit=ptx`` run exactly
these lists, once, and print module.ptx; ``--dump-after=all`` shows every stage (Tile IR
text, then simt, then PTX text).
"""

from __future__ import annotations

from ..diagnostics import CompileError, Diagnostic

# tile -> tile-canon
CANONICALIZE = [
    "assume-to-facts",             # assume ops -> facts           (tile -> tile-canon)
    "simplify-grid-queries",       # one block-id query per kernel; grid-decided compares
    "fold-constants",              # constant scalar/splat arithmetic; x+0, x*1
    "canonicalize-cmp-select",     # constants to the right; trivial selects
    "fold-static-if",              # if on a constant: the taken branch, inlined
    "simplify-shapes",             # no-op reshape/broadcast/permute; chains collapsed
    "simplify-tokens",             # prune join_tokens; unordered ops lose make_token inputs
    "loop-invariant-code-motion",  # invariant pure ops leave for bodies
    "cse",                         # constants uniqued; repeated pure ops merged
    "dce",                         # unused pure ops and weak loads removed
]

# tile-canon -> tile-opt: equality saturation (egglog; rules in nanotile/egraph/rules):
# identities, folding, shapes, casts, strength reduction. Each target names itself as the
# cost model of extraction: eqsat{target=sm_90} / eqsat{target=sm_100} below.
OPTIMIZE = [
    "eqsat",
]

# tile-opt -> tile-ptr -> tile-ordered: the shared lowering of memory.
LOWER_SHARED = [
    "lower-views",                 # views -> pointer tiles, masks, padding (-> tile-ptr)
    "resolve-tokens",              # tokens gone, program order (-> tile-ordered)
]

# tile-ordered -> tile-layout -> simt: how each tile is spread over threads, registers
# and shared memory (layouts in the types), then per-thread code. assign-layouts and
# select-instructions take the target; with mma="wgmma" (sm_90), assign-layouts plans
# the mmaf that fit on wgmma and lower-wgmma expands them; with mma="tcgen05" (sm_100)
# the same for tcgen05 and lower-tcgen05; the others are the same.
def lower(gpu: str, mma: str = "sync") -> list[str]:
    wgmma, tcgen05 = mma == "wgmma", mma == "tcgen05"
    return [
        "lower-constants",             # dense constants -> global tables + loads
        # every tile value gets a layout (-> tile-layout); mma=wgmma / mma=tcgen05: the
        # target's MMA where it fits
        f"assign-layouts{{gpu={gpu}{f' mma={mma}' if mma != 'sync' else ''}}}",
        "vectorize-memory",            # contiguous aligned accesses: ld/st vectors
        "lower-reductions",            # a reduce across threads: register/lane/warp steps
        "remove-layout-conversions",   # cheap values recomputed where a layout is wanted
        "lower-convert-layout",        # conversions: none, a renaming, via shared memory
        "allocate-shared",             # #shared values get their bytes
        "insert-barriers",             # barriers around shared and global writes
        "distribute",                  # tile ops -> per-thread ops (-> simt)
        "lower-mma",                   # warp_mma -> ldmatrix + mma.sync
        *(["lower-wgmma"] if wgmma else []),  # warpgroup_mma -> wgmma.mma_async (sm90/)
        *(["lower-tcgen05"] if tcgen05 else []),  # tmem_mma -> tcgen05.mma (sm100/)
        "simplify-picks",              # renamings of renamings read the original registers
        "widen-narrow-floats",         # 16-bit float ops PTX lacks in f32, rounded once
        "simt-cse",                    # identical per-thread values computed once
        "simt-dce",                    # per-thread values nobody reads
        # TMA-fed K loops: copies N-1 iterations ahead in a ring (the num_stages hint)
        f"pipeline-k-loops{{gpu={gpu}}}",
        f"select-instructions{{gpu={gpu}}}",  # simt -> PTX (-> ptx-sm90 | ptx-sm100)
    ]


# ptx-sm90 -> ptx-sm90: passes over the PTX program (nanotile/targets/ptx/passes), run by
# both targets (a ptx-sm90 pass reads ptx-sm100 too). Dead code first: select-instructions
# computes every element's index, mask and address, and a vector access reads only its
# first element's (a 512x128 reduction: 6,545 lines of PTX, 2,048 left after dead code),
# so the passes after it see a program a third the size. Then constants and copies, so
# that CSE sees identical instructions; CSE leaves copies for a second copy propagation;
# the folds then see the final operands; dead code again after them; branches and
# numbering last.
PTX_PASSES: list[str] = [
    "ptx-dead-code",                  # what select-instructions computed and nothing reads
    "ptx-fold-immediates",            # a register holding a constant -> the immediate
    "ptx-simplify-arith",             # integer identities, constant folding
    "ptx-copy-propagation",           # reads of a copy -> its source
    "ptx-cse",                        # an identical pure instruction computed once
    "ptx-copy-propagation",           # the copies CSE left
    "ptx-hoist-loop-invariants",      # invariants before their loop (register budget)
    "ptx-fold-immediates",            # second round: constants the rewrites exposed,
    "ptx-simplify-arith",             #   identities (0 + x after propagation),
    "ptx-copy-propagation",           #   their copies,
    "ptx-cse",                        #   the repeats they (and the hoisting) make equal,
    "ptx-copy-propagation",           #   and the copies CSE left
    "ptx-strength-reduce",            # an address as an earlier one plus k * stride
    "ptx-fold-wide-multiply",         # cvt to 64 bits then mul -> mul.wide
    "ptx-fold-address-offsets",       # add of a constant -> [reg+offset]
    "ptx-coalesce-copies",            # copies between registers that never clash
    "ptx-dead-code",                  # results nobody reads
    "ptx-remove-redundant-barriers",  # bar.sync that orders nothing new
    "ptx-simplify-branches",          # jumps to the next label, unused labels
    "ptx-compact-registers",          # dense register numbers per class
]

SM90 = [
    "check-target-support{gpu=sm_90}",  # types/ops sm_90 lacks: refused, as tileiras does
    *CANONICALIZE,
    "eqsat{target=sm_90}",         # OPTIMIZE with the sm_90 cost model
    "split-accesses",              # loads taken apart by extract, stored cats: the parts
    "strip-mine",                  # large load-compute-store tiles: a loop over strips
    # view loads of wgmma operands (into their layout, or staged: read into registers
    # and stored in it), shared vectors -> TMA
    "select-tma-loads{gpu=sm_90 stage-operands=true}",
    "select-tma-stores{gpu=sm_90}",  # a matmul's result stored through a view -> TMA
    *LOWER_SHARED,
    *lower("sm_90", mma="wgmma"),  # -> ptx-sm90: .target sm_90a, PTX 8.4 (wgmma where it
                                   #    fits, else mma.sync, f8 too)
    *PTX_PASSES,
]

SM100 = [
    "check-target-support{gpu=sm_100}",  # types/ops sm_100 lacks: refused, as tileiras does
    *CANONICALIZE,
    "eqsat{target=sm_100}",        # OPTIMIZE with the sm_100 cost model
    "split-accesses",              # loads taken apart by extract, stored cats: the parts
    "strip-mine",                  # large load-compute-store tiles: a loop over strips
    # view loads of tcgen05 operands (into their layout, or staged as on sm_90), shared
    # vectors -> TMA
    "select-tma-loads{gpu=sm_100 stage-operands=true}",
    "select-tma-stores{gpu=sm_100}",  # a matmul's result stored through a view -> TMA
    *LOWER_SHARED,
    *lower("sm_100", mma="tcgen05"),  # -> ptx-sm100: .target sm_100a, PTX 8.6 (tcgen05
                                      #    where it fits, else mma.sync; e2m1x2/ue8m0x2 cvt)
    *PTX_PASSES[:-1],
    # wide tcgen05.ld groups (a 256-column accumulator) read in column chunks where the
    # epilogue first uses them, not all at once (sm100/)
    "ptx-sink-tmem-loads",
    PTX_PASSES[-1],                # ptx-compact-registers: numbered in the moved order
]

PIPELINES: dict[str, list[str]] = {"sm_90": SM90, "sm_100": SM100}

# Registered passes that no default pipeline runs, and why: they are run by name (-p,
# nanotile-opt -PASS) as cuda-tile-opt runs them.
NOT_IN_DEFAULT: dict[str, str] = {
    "canonicalize": "cuda-tile-opt's -canonicalize, for nanotile-opt: the default "
                    "pipelines reach their canonical form with their own steps above, and "
                    "keep the PTX those give",
    "inline": "cuda-tile-opt's -inline: Tile IR has no calls, so it canonicalizes each "
              "kernel (MLIR's inliner's default pipeline), as -canonicalize does",
    "loop-split": "cuda-tile runs it at -O3 only; its split point is computed in the "
                  "loop's type and is wrong near the type's limits, as cuda-tile's",
    "test-debuginfo-update-symbol-name": "cuda-tile-opt's test pass: it renames the "
                                         "symbol its options name",
    "synthesize-debug-info-scopes": "it changes only locations, for producers without "
                                    "debug info that want a line table",
}
# Registered passes that only one target's pipeline runs, and that target.
TARGET_ONLY: dict[str, str] = {
    "lower-wgmma": "sm_90",  # wgmma is sm_90a's
    "lower-tcgen05": "sm_100",  # tcgen05 is sm_100a's
    "ptx-sink-tmem-loads": "sm_100",  # tcgen05.ld is sm_100a's
}
DEFAULT_TARGET = "sm_100"


def default_pipeline(target: str = DEFAULT_TARGET) -> str:
    """The pipeline of ``target`` as a ``-p`` string."""
    if target not in PIPELINES:
        raise CompileError(Diagnostic("error", f"unknown target '{target}' (known: "
                                               f"{', '.join(PIPELINES)})", "<command line>"))
    return ",".join(PIPELINES[target])
