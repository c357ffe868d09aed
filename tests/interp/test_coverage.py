"""Every op of the op table has semantics in the interpreter (driven by optable.OPS)."""

from __future__ import annotations

from nanotile.interp import _load_semantics
from nanotile.interp.registry import NOT_EXECUTED, SEMANTICS, TERMINATORS
from nanotile.ir.optable import INTERNAL_OPS, OPS


def test_every_op_has_semantics():
    _load_semantics()
    missing = [name for name, d in OPS.items()
               if name not in SEMANTICS and name not in TERMINATORS and "item" not in d.traits]
    assert not missing, f"ops without interpreter semantics: {missing}"


def test_no_semantics_for_unknown_ops():
    _load_semantics()
    unknown = sorted(set(SEMANTICS) - set(OPS) - set(INTERNAL_OPS))  # + nanotile's own
    assert not unknown, f"semantics registered for ops the op table does not have: {unknown}"


def test_items_are_not_executed():
    assert {n for n, d in OPS.items() if "item" in d.traits} == set(NOT_EXECUTED)
