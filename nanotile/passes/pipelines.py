"""The default pipelines, one per target, read top to bottom.

Both targets share the tile-level passes; the lists part where the backends differ.
Stages not written yet are named in comments at the place they will go.
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

# tile-canon -> tile-opt: equality saturation (egglog; rules in nanotile/egraph/rules)
OPTIMIZE = [
    "eqsat",                       # identities, folding, shapes, casts, strength reduction
]

# tile-opt -> tile-ptr -> tile-ordered -> tile-layout -> simt: the shared lowering.
LOWER_SHARED = [
    "lower-views",                 # views -> pointer tiles, masks, padding (-> tile-ptr)
    "resolve-tokens",              # tokens gone, program order (-> tile-ordered)
    # tile-ptr -> simt: layouts and per-thread code are chosen by nanotile.targets.lower
    # (the PTX back end), which also makes each write visible to the CTA before the next
    # memory op (bar.sync); these stages become passes of their own next.
]

SM90 = [
    *CANONICALIZE,
    *OPTIMIZE,
    *LOWER_SHARED,
    # simt -> ptx-sm90: mma.sync / wgmma, TMA, mbarrier (nanotile/targets/sm90)
]

SM100 = [
    *CANONICALIZE,
    *OPTIMIZE,
    *LOWER_SHARED,
    # simt -> ptx-sm100: tcgen05 MMAs and tensor memory, TMA (nanotile/targets/sm100)
]

PIPELINES: dict[str, list[str]] = {"sm_90": SM90, "sm_100": SM100}
DEFAULT_TARGET = "sm_100"


def default_pipeline(target: str = DEFAULT_TARGET) -> str:
    """The pipeline of ``target`` as a ``-p`` string."""
    if target not in PIPELINES:
        raise CompileError(Diagnostic("error", f"unknown target '{target}' (known: "
                                               f"{', '.join(PIPELINES)})", "<command line>"))
    return ",".join(PIPELINES[target])
