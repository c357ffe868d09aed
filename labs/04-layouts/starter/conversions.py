"""Lab 4: how a tile moves from one layout to another (README.md says what to write).

nanotile's back end uses these functions in place of its own (nanotile.ir.layouts'
``conversion`` and ``shuffle_plan``). lower-convert-layout classifies each
``convert_layout`` between register layouts with ``conversion``. For a "warp"
conversion it asks ``route`` for a shuffle plan, and when there is none it sends the
tile through shared memory. distribute then emits a ``shuffle_idx`` for each plan.

As written, the starter works but is slow: a conversion is either "none" or a round
trip through shared memory.

The layout algebra gives you the tools: a LinearLayout's ``register``, ``lane`` and
``warp`` bases, ``registers``, ``element(r, lane, warp)``; ``Span`` (the GF(2) span of
some vectors: ``contains``, ``add``) and ``solve(bases, target)`` (which subset of
``bases`` XORs to ``target``). Do not call nanotile's ``conversion``,
``shuffle_plan`` or ``conversion_cost``: they are what you are writing.
"""

from __future__ import annotations

from nanotile.ir.layouts import LANE_BITS, LinearLayout, ShufflePlan, Span, solve  # noqa: F401


def conversion(src: LinearLayout, dst: LinearLayout) -> str:
    """What moving a tile from ``src`` to ``dst`` (same shape) takes, the cheapest of:

    - "none": the same layout (every register of every thread holds the same element);
    - "registers": every thread already holds the elements dst gives it, and register k
      of dst is the same source register in every thread (a renaming, no instruction);
    - "warp": every warp holds, in src, the elements dst gives its threads (lanes
      exchange them: warp shuffles);
    - "shared": elements cross warps (a round trip through shared memory).

    Lane bases past the last listed one are zero (broadcasts), and so are warp bases: pad
    before comparing (a warp has LANE_BITS lane bits; use as many warp bits as the
    longer of the two layouts names).
    """
    if src == dst:
        return "none"
    return "shared"  # TODO (step 2): "registers" and "warp"


def shuffle_plan(src: LinearLayout, dst: LinearLayout,
                 max_select_bits: int = 2) -> ShufflePlan | None:
    """The warp-shuffle plan of a "warp" conversion ``src -> dst``, or None when there is
    none: some thread needs an element its warp does not hold, or the source register
    would depend on more than ``max_select_bits`` thread bits.

    A ShufflePlan (nanotile/ir/layouts.py) says, for destination register ``r`` of the
    thread with %tid.x bits ``t`` (lane bits 0-4, then warp bits), which source register
    and lane to read: ``registers[r] ^ XOR(register_map[i] for bits i set in t)`` and
    ``lanes[r] ^ XOR(lane_map[i] for bits i set in t)``. ``lane_map`` has an entry per
    lane bit, then one per warp bit (a warp bit of dst that src does not share must be
    reached within the warp, the same way as a lane bit).

    Solve it over GF(2): a warp holds the elements ``src.register_part(r) ^
    src.thread_part(l, w)``, so each destination register bit and each thread bit
    asks for an element difference, which ``solve`` turns into (source register bits,
    source lane bits). Prefer a solution by lanes alone for the thread bits: then the
    source register does not depend on the thread (``select_bits`` = the rank of
    ``register_map`` = 0, one shuffle per destination register). Every extra select bit
    doubles the shuffles.
    """
    raise NotImplementedError("shuffle_plan: step 3 of README.md")


# ---- the cost model: which way a "warp" conversion goes -----------------------------
# Costs in warp instructions, per conversion. They are a first guess. Tune them against
# what the emulator counts (README.md, step 5).
SHUFFLE_COST = 1     # a shfl.sync, per destination register and candidate
SELECT_COST = 1      # choosing among candidates: per extra candidate and register
STORE_COST = 1       # a st.shared, per source register
LOAD_COST = 1        # an ld.shared, per destination register
BARRIER_COST = 100   # a bar.sync (a round trip through shared memory takes two)


def shuffle_cost(plan: ShufflePlan) -> int:
    """What converting with ``plan`` costs, by the constants above."""
    candidates = 1 << plan.select_bits
    return len(plan.registers) * (candidates * SHUFFLE_COST + (candidates - 1) * SELECT_COST)


def shared_cost(src: LinearLayout, dst: LinearLayout) -> int:
    """What a round trip through shared memory costs, by the constants above."""
    return src.registers * STORE_COST + dst.registers * LOAD_COST + 2 * BARRIER_COST


def route(src: LinearLayout, dst: LinearLayout) -> ShufflePlan | None:
    """What the pipeline does with a "warp" conversion: the shuffle plan when shuffles
    cost less than shared memory, else None (through shared memory)."""
    plan = shuffle_plan(src, dst, max_select_bits=5)
    if plan is None or shuffle_cost(plan) > shared_cost(src, dst):
        return None
    return plan
