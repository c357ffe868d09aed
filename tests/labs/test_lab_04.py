"""Lab 4 (layout conversions): the grader's ground truth comes from element tables, and it
catches wrong kinds, wrong or wasteful shuffle plans and a cost model that is slower
than nanotile's, from variants of nanotile's own functions."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from nanotile import labkit
from nanotile.ir import layouts
from nanotile.ir.layouts import LinearLayout, Span, default_blocked, solve

(LAB,) = [lab for lab in labkit.find_labs(labkit.default_labs_folder()) if lab.number == 4]
GRADER = LAB.grader
PAIRS = labkit.load_module(LAB.folder / "pairs.py", "lab4_pairs_test")


def solution(name: str, conversion=layouts.conversion, shuffle_plan=layouts.shuffle_plan,
             route=layouts.shuffle_plan) -> SimpleNamespace:
    return SimpleNamespace(conversion=conversion, shuffle_plan=shuffle_plan, route=route,
                           name=name)


def part(word: str):
    (found,) = [p for p in GRADER.PARTS if word in p.name]
    return found


def test_the_kinds_of_known_pairs_come_from_the_tables():
    cyclic = default_blocked((1024,), 4)
    swapped = LinearLayout(cyclic.shape, cyclic.register[::-1], cyclic.lane, cyclic.warp)
    lanes = LinearLayout(cyclic.shape, cyclic.register, cyclic.lane[::-1], cyclic.warp)
    assert PAIRS.true_kind(cyclic, cyclic) == "none"
    assert PAIRS.true_kind(cyclic, swapped) == "registers"
    assert PAIRS.true_kind(cyclic, lanes) == "warp"
    assert PAIRS.true_kind(cyclic, default_blocked((1024,), 4, vector=4)) == "shared"
    table = PAIRS.element_table(cyclic, 4)
    assert table[3, 7, 5] == cyclic.element(5, 7, 3)


def test_the_pairs_cover_every_kind_and_several_select_bits():
    pairs = PAIRS.all_pairs()
    kinds = {PAIRS.true_kind(p.src, p.dst) for p in pairs}
    assert kinds == {"none", "registers", "warp", "shared"}
    bits = {layouts.shuffle_plan(p.src, p.dst, 5).select_bits for p in pairs
            if PAIRS.true_kind(p.src, p.dst) == "warp"}
    assert {0, 1, 2, 3} <= bits


def test_a_plan_reading_the_neighbouring_lane_is_caught():
    def neighbour(src, dst, max_select_bits=2):
        plan = layouts.shuffle_plan(src, dst, max_select_bits)
        return plan and dataclasses.replace(plan, lanes=tuple(x ^ 1 for x in plan.lanes))

    score = part("shuffle_plan").check(solution("neighbour", shuffle_plan=neighbour))
    assert score.fraction < 0.5 and "reads element" in score.message


def _registers_first(src, dst, max_select_bits=2):
    """nanotile's plan, but thread bits solved with registers and lanes together: right,
    yet a lane that copies a register makes the source register depend on the thread."""
    lanes = src.lane + (0,) * (5 - len(src.lane))
    held = src.register + lanes
    n = len(src.register)
    width = max(len(src.warp), len(dst.warp))

    def reach(b):
        found = solve(held, b)
        return None if found is None else (found & ((1 << n) - 1), found >> n)

    warp = [a ^ b for a, b in zip(src.warp + (0,) * width, dst.warp + (0,) * width)][:width]
    per_register = [reach(b) for b in dst.register]
    per_thread = [reach(b) for b in dst.lane + (0,) * (5 - len(dst.lane)) + tuple(warp)]
    if None in per_register + per_thread or \
            len(Span([r for r, _ in per_thread])) > max_select_bits:
        return None
    registers, sources = [], []
    for k in range(dst.registers):
        r = lane = 0
        for i, (rb, lb) in enumerate(per_register):
            if k >> i & 1:
                r, lane = r ^ rb, lane ^ lb
        registers.append(r)
        sources.append(lane)
    return layouts.ShufflePlan(tuple(registers), tuple(sources),
                               tuple(lb for _, lb in per_thread),
                               tuple(rb for rb, _ in per_thread))


def test_a_plan_with_needless_selects_is_caught():
    score = part("shuffle_plan").check(solution("registers first",
                                                shuffle_plan=_registers_first))
    assert 0.5 < score.fraction < 1
    assert "a lane copying a register" in score.message and "shuffles per word" in score.message


def test_a_warp_conversion_called_a_renaming_is_caught_in_the_kernels():
    def renaming(src, dst):
        kind = layouts.conversion(src, dst)
        return "registers" if kind == "warp" and src.registers == dst.registers else kind

    wrong = solution("renaming", conversion=renaming)
    assert part("kind").check(wrong).fraction < 1
    results = part("match the interpreter").check(wrong)
    assert results.fraction < 1 and "transpose_" in results.message


@pytest.mark.parametrize("bits, full", [(1, True), (3, False)])
def test_the_cost_model_is_measured_against_nanotiles(bits, full):
    """Shuffles up to 1 select bit beat nanotile's choice (up to 2) in warp instructions;
    up to 3 take more on the kernels with 3-bit plans."""
    def route(src, dst):
        return layouts.shuffle_plan(src, dst, bits)

    tuned = solution(f"{bits} select bits", route=route)
    instructions = part("warp instructions").check(tuned)
    assert (instructions.fraction == 1) == full, instructions.message
    if full:
        assert part("convert_layout").check(tuned).fraction == 1
    else:
        assert "transpose_16x16_f16_1w" in instructions.message
