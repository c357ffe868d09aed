"""Lab 4's layout pairs, and what a conversion between two layouts really needs.

    python labs/04-layouts/pairs.py [--reference]

grades starter/conversions.py's ``conversion`` and ``shuffle_plan`` (``--reference``:
nanotile's own, nanotile.ir.layouts) on the pairs below and prints, for each family of
pairs, how many came out right and the first that did not, in full.

Nothing here calls nanotile's ``conversion`` or ``shuffle_plan`` to decide what is
right. Each layout becomes a table, ``table[warp, lane, register]`` = the flat index of
the element that register holds (``element_table``). The kind of a conversion then
follows from the tables (``true_kind``). A shuffle plan is applied to the source table
and compared with the destination table (``plan_problem``).
"""

from __future__ import annotations

import itertools
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LANES = 32
SEED = 4


@dataclass(frozen=True)
class Pair:
    family: str       # how it was made (messages name it)
    src: object       # LinearLayout
    dst: object


# ---- what a conversion needs, from the tables ---------------------------------------

def cta_warps(src, dst) -> int:
    """Warps enough to see every distinct thread of both layouts (more hold copies)."""
    return 1 << max(len(src.warp), len(dst.warp))


def element_table(layout, warps: int) -> np.ndarray:
    """``table[w, l, r]``: the flat index of the element register r of lane l of warp w
    holds."""
    def part(bases: tuple[int, ...], count: int) -> np.ndarray:
        values = np.arange(count)
        out = np.zeros(count, dtype=np.int64)
        for bit, basis in enumerate(bases):
            out ^= np.where((values >> bit) & 1, basis, 0)
        return out

    return (part(layout.warp, warps)[:, None, None] ^ part(layout.lane, LANES)[None, :, None]
            ^ part(layout.register, layout.registers)[None, None, :])


def true_kind(src, dst) -> str:
    """"none" (every register holds the same element), "registers" (each thread has what
    it needs, in registers whose numbers do not depend on the thread), "warp" (each warp
    has what its threads need) or "shared" (elements cross warps)."""
    warps = cta_warps(src, dst)
    have, want = element_table(src, warps), element_table(dst, warps)
    if have.shape == want.shape and (have == want).all():
        return "none"
    first = {int(e): r for r, e in enumerate(have[0, 0])}
    if all(int(e) in first for e in want[0, 0]):
        renaming = np.array([first[int(e)] for e in want[0, 0]])
        if (have[:, :, renaming] == want).all():
            return "registers"
    for w in range(warps):
        if not set(want[w].ravel().tolist()) <= set(have[w].ravel().tolist()):
            return "shared"
    return "warp"


def plan_problem(plan, src, dst) -> str | None:
    """What is wrong with ``plan`` (a ShufflePlan for src -> dst): None when every
    destination register of every thread reads, from the source register and lane the
    plan names, the element dst puts there."""
    if len(plan.registers) != dst.registers or len(plan.lanes) != dst.registers:
        return (f"the plan has {len(plan.registers)} registers and {len(plan.lanes)} "
                f"lanes; dst has {dst.registers} registers")
    warps = cta_warps(src, dst)
    have, want = element_table(src, warps), element_table(dst, warps)
    threads = np.arange(warps * LANES)
    registers = np.array(plan.registers)[None, :] ^ _combine(plan.register_map, threads)[:, None]
    lanes = np.array(plan.lanes)[None, :] ^ _combine(plan.lane_map, threads)[:, None]
    if registers.min() < 0 or registers.max() >= src.registers:
        return f"a source register outside src's {src.registers} registers"
    if lanes.min() < 0 or lanes.max() >= LANES:
        return "a source lane outside 0..31"
    warp = threads >> 5
    got = have[warp[:, None], lanes, registers]
    expected = want[warp, threads & 31, :]
    wrong = np.argwhere(got != expected)
    if len(wrong) == 0:
        return None
    thread, register = (int(i) for i in wrong[0])
    return (f"thread {thread} (lane {thread & 31}, warp {thread >> 5}) register {register} "
            f"reads element {int(got[thread, register])} from lane {int(lanes[thread, register])} "
            f"register {int(registers[thread, register])}; dst wants element "
            f"{int(expected[thread, register])} there ({len(wrong)} registers wrong)")


def _combine(bases: tuple[int, ...], threads: np.ndarray) -> np.ndarray:
    out = np.zeros(len(threads), dtype=np.int64)
    for bit, basis in enumerate(bases):
        out ^= np.where((threads >> bit) & 1, basis, 0)
    return out


# ---- the pairs ------------------------------------------------------------------------

SHAPES = [(32,), (128,), (256,), (8, 8), (4, 16), (16, 4), (2, 64), (8, 32), (32, 8),
          (16, 16), (4, 64), (32, 32), (16, 8), (64, 16)]


def layouts_of(shape: tuple[int, ...], warps: int) -> list:
    """Blocked layouts of ``shape`` over ``warps`` warps: the default ones (vectors of 1,
    2 and 4), the transposed ones, and for 2-D shapes a few other lane arrangements."""
    from nanotile.ir.layouts import blocked, default_blocked

    found = [default_blocked(shape, warps, vector) for vector in (1, 2, 4)]
    if len(shape) == 2:
        rows, cols = shape
        for lanes_rows in (1, 2, 4, 8, 16, 32):
            lanes = (lanes_rows, LANES // lanes_rows)
            for order in ((1, 0), (0, 1)):
                for warps_rows in (1, warps):
                    warp_grid = (warps_rows, warps // warps_rows)
                    found.append(blocked(shape, (1, 1), lanes, warp_grid, order))
    unique = []
    for layout in found:
        if layout not in unique:
            unique.append(layout)
    return unique


def variants(layout, rng: random.Random) -> Iterator[tuple[str, object, object]]:
    """(how, src, dst): pairs made from ``layout`` by moving its bases around."""
    from nanotile.ir.layouts import LinearLayout

    register, lane, warp = list(layout.register), list(layout.lane), list(layout.warp)
    lane += [0] * (5 - len(lane))
    shape = layout.shape

    def make(r, l, w) -> LinearLayout | None:
        try:
            return LinearLayout(shape, tuple(r), tuple(l), tuple(w))
        except ValueError:
            return None

    yield "same layout", layout, layout
    if len(register) >= 2:
        yield ("registers reordered", layout,
               make(rng.sample(register, len(register)), lane, warp))
        mixed = list(register)
        mixed[0] ^= mixed[1]
        yield "registers recombined", layout, make(mixed, lane, warp)
    yield "lanes permuted", layout, make(register, rng.sample(lane, len(lane)), warp)
    for swaps in (1, 2, 3):
        if len(register) >= swaps:
            r, l = list(register), list(lane)
            for i, j in zip(rng.sample(range(len(r)), swaps), rng.sample(range(5), swaps)):
                r[i], l[j] = l[j], r[i]
            if all(r):
                yield f"{swaps} lane <-> register swaps", layout, make(r, l, warp)
    moving = [k for k in range(5) if lane[k]]
    if warp and moving:
        l, w = list(lane), list(warp)
        i = rng.choice(moving)
        l[i], w[0] = w[0], l[i]
        yield "a lane <-> warp swap", layout, make(register, l, w)
    if moving:
        i = rng.choice(moving)
        l = list(lane)
        l[i] = 0
        yield ("a lane made a copy, its element in registers", layout,
               make(register + [lane[i]], l, warp))
    if moving and register:
        # lane i holds what a register holds (a copy), its own element moves to a
        # register; then the lanes are permuted: the copy must be read by lanes alone
        i = rng.choice(moving)
        l = list(lane)
        l[i] = rng.choice(register)
        copying = make(register + [lane[i]], l, warp)
        yield ("a lane copying a register, lanes permuted", copying,
               make(register + [lane[i]], rng.sample(l, len(l)), warp))


def all_pairs() -> list[Pair]:
    """The graded pairs (the same every time: a fixed seed)."""
    from nanotile.ir.layouts import mma_layout

    rng = random.Random(SEED)
    pairs: list[Pair] = []
    for shape, warps in itertools.product(SHAPES, (1, 2, 4)):
        family = layouts_of(shape, warps)
        for layout in rng.sample(family, min(2, len(family))):
            for name, src, dst in variants(layout, rng):
                if src is not None and dst is not None:
                    pairs.append(Pair(name, src, dst))
        for a, b in rng.sample(list(itertools.permutations(family, 2)),
                               min(4, len(family) * (len(family) - 1))):
            pairs.append(Pair("two blocked layouts", a, b))
    for shape, warps in (((16, 8), (1, 1)), ((32, 16), (2, 1)), ((32, 32), (2, 2))):
        acc = mma_layout("acc", shape, warps)
        total = warps[0] * warps[1]
        for other in layouts_of(shape, total)[:4]:
            pairs.append(Pair("mma accumulator -> blocked", acc, other))
            pairs.append(Pair("blocked -> mma accumulator", other, acc))
    return pairs


# ---- grading a solution -----------------------------------------------------------------

def kind_problems(conversion: Callable, pairs: list[Pair]) -> list[str]:
    """One line per pair whose kind ``conversion`` gets wrong (or raises on)."""
    problems = []
    for pair in pairs:
        want = true_kind(pair.src, pair.dst)
        try:
            got = conversion(pair.src, pair.dst)
        except Exception as error:  # noqa: BLE001 - the student's code: report it
            got = f"{type(error).__name__}: {error}"
        if got != want:
            problems.append(f"{pair.family}: {pair.src} -> {pair.dst}: {want!r}, got {got!r}")
    return problems


def plan_problems(shuffle_plan: Callable, pairs: list[Pair]) -> list[str]:
    """One line per pair whose plan is wrong. A "warp" pair's plan (with up to 5 select
    bits) must move every element where dst wants it and take no more shuffles than
    nanotile's; with ``max_select_bits=0`` a plan must come back whenever nanotile finds
    one without selects, and never need selects. A "shared" pair must get no plan."""
    problems = []
    for pair in pairs:
        kind = true_kind(pair.src, pair.dst)
        if kind not in ("warp", "shared"):
            continue
        problem = _plan_problem(shuffle_plan, pair, kind)
        if problem:
            problems.append(f"{pair.family}: {pair.src} -> {pair.dst}: {problem}")
    return problems


def _plan_problem(shuffle_plan: Callable, pair: Pair, kind: str) -> str | None:
    from nanotile.ir.layouts import shuffle_plan as nanotiles

    try:
        plan = shuffle_plan(pair.src, pair.dst, 5)
        without_selects = shuffle_plan(pair.src, pair.dst, 0)
    except Exception as error:  # noqa: BLE001 - the student's code: report it
        return f"{type(error).__name__}: {error}"
    if kind == "shared":
        return None if plan is None else "elements cross warps, yet a plan came back"
    if plan is None:
        return "a 'warp' conversion, yet no plan (with up to 5 select bits)"
    problem = plan_problem(plan, pair.src, pair.dst)
    if problem:
        return problem
    best = nanotiles(pair.src, pair.dst, 5)
    if plan.shuffles > best.shuffles:
        return (f"right, but {plan.shuffles} shuffles per word where {best.shuffles} "
                f"do (select bits {plan.select_bits}, nanotile's {best.select_bits})")
    if without_selects is None:
        return "with max_select_bits=0: no plan, but one without selects exists" \
            if best.select_bits == 0 else None
    if without_selects.select_bits > 0:
        return "with max_select_bits=0 the plan still needs selects"
    return plan_problem(without_selects, pair.src, pair.dst)


def report(name: str, problems: list[str], total: int) -> str:
    head = f"{name}: {total - len(problems)}/{total} right"
    return head + (f"\n  first wrong: {problems[0]}" if problems else "")


def main(argv: list[str]) -> int:
    from nanotile import labkit

    if "--reference" in argv:
        from nanotile.ir import layouts as solution
    else:
        solution = labkit.load_module(HERE / "starter" / "conversions.py", "lab4_starter")
    pairs = all_pairs()
    warp_pairs = [p for p in pairs if true_kind(p.src, p.dst) in ("warp", "shared")]
    kinds = {k: sum(true_kind(p.src, p.dst) == k for p in pairs)
             for k in ("none", "registers", "warp", "shared")}
    print(f"{len(pairs)} pairs: " + ", ".join(f"{n} {k}" for k, n in kinds.items()))
    print(report("conversion", kind_problems(solution.conversion, pairs), len(pairs)))
    print(report("shuffle_plan", plan_problems(solution.shuffle_plan, warp_pairs),
                 len(warp_pairs)))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout: nanotile beside labs/
    sys.exit(main(sys.argv[1:]))
