"""Lab 1 (reading Tile IR, interpreter rules): its cases agree with NumPy and with the
project's interpreter, and the grader catches rules that are wrong in the ways students
get them wrong (NaN, i1 wrap, the identity, dtypes, errors that are not their own)."""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import numpy as np
import pytest

from nanotile import labkit
from nanotile.interp import InterpError
from nanotile.interp.ops_tile import fold_order
from nanotile.interp.registry import SEMANTICS

LAB = next(lab for lab in labkit.find_labs(labkit.default_labs_folder()) if lab.number == 1)


@pytest.fixture(scope="module")
def grader() -> ModuleType:
    return LAB.grader


@pytest.fixture(scope="module")
def reference(grader: ModuleType) -> SimpleNamespace:
    return grader.solution(True)


def score(grader: ModuleType, part_name: str, solution: SimpleNamespace) -> labkit.Score:
    part = next(p for p in grader.PARTS if p.name.startswith(part_name))
    return part.check(solution)


def with_rules(reference: SimpleNamespace, **rules: object) -> SimpleNamespace:
    return SimpleNamespace(rules={**reference.rules, **rules}, answers=reference.answers)


def test_every_case_is_what_numpy_and_the_interpreter_say(grader: ModuleType) -> None:
    for op, make in grader.cases.CASES.items():
        for case in make():
            if case.expected is None:
                with pytest.raises(InterpError):
                    grader.cases.run_case(case)
                continue
            got = grader.cases.run_case(case)
            for want, result in zip(case.expected, got):
                assert grader.cases.difference(want, result, case.reordered) is None, \
                    f"{op}: {case.title}"


def test_maxf_with_numpy_maximum_loses_the_nan_cases(grader, reference) -> None:
    def maxf(tb, op, args):  # NaN always wins, and flush_to_zero is forgotten
        return [np.maximum(args[0], args[1])]

    result = score(grader, "maxf", with_rules(reference, maxf=maxf))
    assert 0 < result.fraction < 1
    assert "NaN: the other operand wins" in result.message
    assert score(grader, "addi", with_rules(reference, maxf=maxf)).fraction == 1


def test_addi_adding_bools_is_caught(grader, reference) -> None:
    def addi(tb, op, args):  # NumPy's bool + bool is `or`, not addition modulo 2
        return [np.add(args[0], args[1])]

    result = score(grader, "addi", with_rules(reference, addi=addi))
    assert result.fraction < 1 and "i1" in result.message


def test_reduce_forgetting_the_identity_is_caught(grader, reference) -> None:
    project = reference.rules["reduce"]

    def reduce(tb, op, args):  # folds from the first element instead of the identity
        block = op.regions[0].block
        dim = op.attributes["dim"]
        accumulators = [np.take(x, 0, axis=dim) for x in args]
        for k in range(1, args[0].shape[dim]):
            values = [v for x, acc in zip(args, accumulators)
                      for v in (np.take(x, k, axis=dim), acc)]
            accumulators = [np.asarray(v) for v in tb.run_block(block, values).values]
        return [a.astype(x.dtype) for a, x in zip(accumulators, args)]

    result = score(grader, "reduce", with_rules(reference, reduce=reduce))
    assert 0 < result.fraction < 1 and "identity" in result.message
    assert project is SEMANTICS["reduce"]  # the registry was restored


def test_reduce_in_the_specs_fold_order_gets_full_marks(grader, reference) -> None:
    project = reference.rules["reduce"]

    def reduce(tb, op, args):  # one body call per element, rounding at every step
        with fold_order():
            return project(tb, op, args)

    assert score(grader, "reduce", with_rules(reference, reduce=reduce)).fraction == 1
    assert score(grader, "whole kernels", with_rules(reference, reduce=reduce)).fraction == 1


def test_a_rule_returning_the_wrong_dtype_is_named(grader, reference) -> None:
    def select(tb, op, args):
        return [np.where(args[0], args[1], args[2]).astype(np.float64)]

    result = score(grader, "select", with_rules(reference, select=select))
    assert result.fraction < 1 and "float64" in result.message


def test_a_rule_writing_into_its_operand_is_caught(grader, reference) -> None:
    def reshape(tb, op, args):
        result = args[0].reshape(op.results[0].type.shape)  # a view of the operand...
        result.flat[0] = result.flat[-1]  # ...so this writes into the operand too
        return [result]

    result = score(grader, "broadcast", with_rules(reference, reshape=reshape))
    assert result.fraction < 1 and "in place" in result.message


def test_only_an_error_the_rule_raises_itself_counts_for_overflow(grader, reference) -> None:
    project = reference.rules["addi"]

    def addi(tb, op, args):  # crashes in debug mode instead of checking the flag
        if tb.machine.debug:
            raise ValueError("no debug mode yet")
        return project(tb, op, args)

    result = score(grader, "addi", with_rules(reference, addi=addi))
    assert result.fraction == pytest.approx(7 / 13)  # the six debug-mode cases fail
    assert "ValueError" in result.message


def test_a_wrong_answer_loses_its_question(grader, reference) -> None:
    answers = SimpleNamespace(**vars(reference.answers))
    answers.FIRST_PASS_WITHOUT_VIEWS = "cse"
    answers.BYTECODE_VERSION = 13.4  # a float, not the string "13.4"
    result = score(grader, "questions", SimpleNamespace(rules=reference.rules,
                                                         answers=answers))
    assert result.fraction == pytest.approx(5 / 7)
    assert "FIRST_PASS_WITHOUT_VIEWS" in result.message and "BYTECODE_VERSION" in result.message


def test_answers_are_computed_from_the_pipeline(grader) -> None:
    truths = grader.true_answers()
    assert truths["LANGUAGE_WITHOUT_VIEWS"] == "tile-ptr"
    assert truths["FIRST_PASS_WITHOUT_VIEWS"] == "lower-views"
    assert isinstance(truths["SOFTMAX_OPS_AFTER_CSE"], int)


def test_a_missing_rule_costs_its_parts_only(grader, reference) -> None:
    rules = dict(reference.rules)
    del rules["select"]
    solution = SimpleNamespace(rules=rules, answers=reference.answers)
    results = {part.name: labkit._grade_part(part, solution) for part in grader.PARTS}
    assert results["select"].earned == 0 and "select" in results["select"].message
    assert sum(r.earned for r in results.values()) > 60
