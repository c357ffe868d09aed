"""Debug-info scope rules: entries, the ops inside them, globals."""

from __future__ import annotations

from nanotile.ir.attrs import (
    DenseElementsAttr,
    DICompileUnitAttr,
    DIFileAttr,
    DILexicalBlockAttr,
    DILocAttr,
    DISubprogramAttr,
    FusedLoc,
    NameLoc,
)
from nanotile.ir.core import make_op

from .build import Kernel, errors, only_error, tile

FILE = DIFileAttr("foo.py", "/tmp/")
CU = DICompileUnitAttr(FILE)
SUB = DISubprogramAttr(FILE, 1, "test", "k", CU, 2)
OTHER = DISubprogramAttr(FILE, 1, "other", "other", CU, 2)
BLOCK = DILexicalBlockAttr(SUB, FILE, 3, 4)


def at(scope, line=7):
    return DILocAttr(scope, "/tmp/foo.py", line, 8)


def kernel(fn_loc, op_loc=None):
    k = Kernel(tile((), "i32"), kind="entry")
    k.item.location = fn_loc
    op = k.op("addi", [k.arg(0), k.arg(0)], [tile((), "i32")])
    op.location = op_loc
    return k.module()


def test_consistent_scopes_pass():
    assert errors(kernel(at(SUB), at(BLOCK))) == []
    assert errors(kernel(NameLoc("entry", at(SUB)), at(SUB))) == []
    assert errors(kernel(None, None)) == []


def test_function_scope_must_be_a_subprogram():
    msg = only_error(kernel(at(BLOCK)))
    assert "invalid function debug info scope" in msg
    assert "Function location must have cuda_tile.di_subprogram debug info scope" in msg
    msg = only_error(kernel(FusedLoc((at(BLOCK),))))
    assert "Function location must have cuda_tile.di_subprogram" in msg


def test_function_name_must_match_linkage_name():
    msg = only_error(kernel(at(OTHER)))
    assert 'Function name "k" does not match subprogram scope linkage name "other"' in msg


def test_op_scopes():
    msg = only_error(kernel(None, at(SUB)))
    assert msg.startswith("'cuda_tile.addi' op invalid operation debug info scope")
    assert "function debug info scope is undefined" in msg
    msg = only_error(kernel(at(SUB), at(OTHER)))
    assert msg.startswith("invalid operation debug info scope")
    assert "Operation debug info scope does not match function debug info scope" in msg


def test_globals_have_no_scope():
    value = DenseElementsAttr(tile((4,), "f32"), b"\0" * 4, True)
    g = make_op("global", [], [], {"sym_name": "g", "value": value})
    g.location = at(SUB)
    assert "Global variables must not have scope" in only_error(Kernel().module(g))
