"""The text parser and the bytecode reader (written separately) build the same IR.

Each corpus kernel exists as tileirdisasm text (.mlir) and as cuTile's bytecode
(.tileirbc). Parsing one and reading the other must give the same ops, operand groups,
result types, constants (bit-exact bytes) and attributes. A sample keeps it quick.
"""

from __future__ import annotations

import pytest

from nanotile.ir.parser import parse_text

from .helpers import CORPUS

PAIRS = sorted((CORPUS / "cutile").glob("*.tileirbc")) + \
    sorted((CORPUS / "cutile-tests").glob("*.tileirbc"))[::10]

# Attributes bytecode may omit where text spells the default, or the reverse.
_DEFAULTED = {("global", "symbol_visibility"), ("entry", "optimization_hints")}


@pytest.mark.parametrize("bc", PAIRS, ids=[p.stem for p in PAIRS])
def test_same_ir(bc) -> None:
    try:
        from nanotile.bytecode.reader import read_bytecode
    except ImportError:
        pytest.skip("bytecode reader not available")
    text = bc.with_suffix(".mlir")
    a = parse_text(text.read_text(), text.name)
    b = read_bytecode(bc.read_bytes(), bc.name)
    ops_a, ops_b = list(a.walk()), list(b.walk())
    assert [o.name for o in ops_a] == [o.name for o in ops_b]
    for x, y in zip(ops_a, ops_b):
        where = f"{x.name} at {x.source}"
        assert [len(g) for g in x.operand_groups()] == [len(g) for g in y.operand_groups()], where
        assert [v.type for v in x.operands] == [v.type for v in y.operands], where
        assert [v.type for v in x.results] == [v.type for v in y.results], where
        for key in set(x.attributes) | set(y.attributes):
            if (x.name, key) in _DEFAULTED:
                continue
            assert x.attributes.get(key) == y.attributes.get(key), f"{where}: {key}"
