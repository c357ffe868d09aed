"""Lab 5 (labs/05-lowering): the grader catches wrong lowerings (a missing re-sign-extension,
division that ignores its rounding), PTX only ptxas refuses, and extra instructions; nanotile's
own rules plugged in through the same hook get every case right at nanotile's cost."""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import pytest

from nanotile import labkit
from nanotile.targets.compile import ptxas_path
from nanotile.targets.ptx.select_arith import _int_binary, elem


@pytest.fixture
def grader() -> ModuleType:
    lab = next(lab for lab in labkit.find_labs(labkit.default_labs_folder())
               if lab.number == 5)
    return lab.grader


def nanotiles_rule(lw, op, ins, out) -> None:
    """nanotile's own lowering, called the way the grader calls a student's rule."""
    _int_binary(lw, op, elem(op.operands[0].type), ins, out)


def rules(**changed) -> SimpleNamespace:
    table = {op: nanotiles_rule for op in ("addi", "subi", "muli", "shli", "shri", "maxi",
                                           "mini", "divi", "remi")}
    return SimpleNamespace(RULES={**table, **changed})


def test_nanotiles_rules_through_the_hook_match_the_reference(grader):
    student, reference = rules(), grader.solution(True)
    for case in [grader.Case("addi", "i8"), grader.Case("shri", "i8", "unsigned", "shift"),
                 grader.Case("divi", "i16", "signed rounding<negative_inf>", "divisor"),
                 grader.Case("remi", "i64", "unsigned", "divisor")]:
        mine, theirs = grader.outcome(student, case), grader.outcome(reference, case)
        assert mine.right, mine.problem
        assert mine.warp_instructions == theirs.warp_instructions


def test_a_missing_re_sign_extension_is_caught(grader):
    def add_without_bfe(lw, op, ins, out):
        bits = 64 if elem(op.operands[0].type).bitwidth == 64 else 32
        lw.fn.emit(f"add.s{bits} {out}, {ins[0]}, {ins[1]}")

    student = rules(addi=add_without_bfe)
    assert grader.outcome(student, grader.Case("addi", "i32")).right
    wrong = grader.outcome(student, grader.Case("addi", "i8"))
    assert not wrong.right and "elements differ" in wrong.problem


def test_division_that_ignores_the_rounding_is_caught(grader):
    def truncating(lw, op, ins, out):
        lw.fn.emit(f"div.s32 {out}, {ins[0]}, {ins[1]}")

    student = rules(divi=truncating)
    cases = [grader.Case("divi", "i32", f"signed rounding<{mode}>", "divisor")
             for mode in ("zero", "negative_inf")]
    score = grader._results(cases)(student)
    assert score.fraction == 0.5 and "divi signed rounding<negative_inf> i32" in score.message


def test_a_rule_that_raises_names_its_line(grader):
    def unfinished(lw, op, ins, out):
        raise NotImplementedError("later")

    result = grader.outcome(rules(remi=unfinished), grader.Case("remi", "i8", "signed",
                                                                "divisor"))
    assert "NotImplementedError: later (test_lab_05.py:" in result.problem


@pytest.mark.skipif(ptxas_path() is None, reason="needs ptxas (pip install -e '.[oracles]')")
def test_a_64_bit_shift_amount_runs_but_ptxas_refuses_it(grader):
    def shift_by_64_bits(lw, op, ins, out):
        lw.fn.emit(f"shl.b64 {out}, {ins[0]}, {ins[1]}")

    case = grader.Case("shli", "i64", "", "shift")
    grader.ALL_CASES = [case]
    student = rules(shli=shift_by_64_bits)
    assert grader.outcome(student, case).right  # the emulator is lenient
    score = grader.check_ptxas(student)
    assert score.fraction == 0 and "shli i64" in score.message


def test_without_ptxas_the_part_follows_the_emulator(grader, monkeypatch):
    import nanotile.targets.compile

    monkeypatch.setattr(nanotile.targets.compile, "ptxas_path", lambda: None)
    grader.ALL_CASES = [grader.Case("subi", "i16"), grader.Case("muli", "i16")]
    score = grader.check_ptxas(rules(subi=lambda lw, op, ins, out: None))
    assert score.fraction == 0.5 and "ptxas is not installed" in score.message


def test_extra_instructions_cost_points(grader):
    def slow_maximum(lw, op, ins, out):
        nanotiles_rule(lw, op, ins, out)
        for _ in range(3):  # right, but 6 instructions more per element
            lw.fn.emit(f"not.b32 {out}, {out}")
            lw.fn.emit(f"not.b32 {out}, {out}")

    grader.ALL_CASES = [grader.Case("maxi", "i32", "signed")]
    student = rules(maxi=slow_maximum)
    assert grader.outcome(student, grader.ALL_CASES[0]).right
    score = grader.check_instruction_counts(student)
    assert score.fraction == 0 and "(+8 allowed)" in score.message


def test_importing_nanotiles_lowering_is_refused(grader, tmp_path):
    copied = tmp_path / "integer_arithmetic.py"
    copied.write_text("from nanotile.targets.ptx.select_arith import _int_binary\nRULES = {}\n")
    grader.STARTER = copied
    with pytest.raises(ImportError, match="select_arith"):
        grader.solution(False)
