"""The op table's text formats and the float spelling.

Every op row must have a format whose names exist in the row (so a typo in a format is
caught here, not by a user). Float spellings are checked against ones NVIDIA's tools
printed (the corpus), including the cases where MLIR leaves `%e` style.
"""

from __future__ import annotations

import pytest

from nanotile.ir import types as T
from nanotile.ir.asm_attrs import float_to_bits, format_float, parse_float_literal
from nanotile.ir.asm_format import DIRECTIVES, compile_format, format_of
from nanotile.ir.optable import OPS


def _names(elems):
    for e in elems:
        yield e
        yield from _names(e.children)


@pytest.mark.parametrize("name", sorted(OPS))
def test_format_refers_to_the_row(name: str) -> None:
    d = OPS[name]
    elems = compile_format(format_of(d))
    operands = {o.name for o in d.operands}
    results = {r.name for r in d.results}
    attrs = {a.name for a in d.attrs}
    for e in _names(elems):
        if e.kind == "operand":
            assert e.name in operands, e
        elif e.kind == "type":
            for n in e.names:
                assert n in operands | results, e
        elif e.kind == "attr":
            assert e.name in attrs, e
        elif e.kind == "custom":
            assert e.name in DIRECTIVES, e


@pytest.mark.parametrize("value,elem,text", [
    (1.0, T.F32, "1.000000e+00"),
    (0.0, T.F32, "0.000000e+00"),
    (1024.0, T.F32, "1.024000e+03"),
    (1e-5, T.F32, "9.99999974E-6"),          # 6 digits do not read back: APFloat's form
    (0.7978845608, T.F32, "0.797884583"),
    (3.14, T.F64, "3.140000e+00"),
    (1.1, T.BF16, "1.101560e+00"),
    (float("inf"), T.F32, "0x7F800000"),      # infinities and NaN print as hex bits
    (float("-inf"), T.F16, "0xFC00"),
    (float("inf"), T.BF16, "0x7F80"),
])
def test_float_spelling(value: float, elem: T.ElementType, text: str) -> None:
    bits = float_to_bits(value, elem)
    assert format_float(bits, elem) == text
    assert parse_float_literal(text, elem) == bits


def test_overflowing_literals_round_to_infinity() -> None:
    assert float_to_bits(70000.0, T.F16) == 0x7C00
    assert float_to_bits(-1e40, T.F32) == 0xFF800000
