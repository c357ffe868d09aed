"""The compiled op parsers (asm_format.compile_parser) read exactly what the format
interpreter (asm_format.parse_format) reads: the same ops, attributes, types, and the same
errors. The interpreter is the reference reading of the op table's ``asm`` strings; the
compiled closures are its fast path."""

from __future__ import annotations

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir import asm_format, parser
from nanotile.ir.optable import OPS
from nanotile.ir.printer import print_module

from .helpers import CORPUS

# Every op of the op table appears in some of these (tileirdisasm prints of cuTile kernels
# and of the reference tests' inputs); a sample keeps the test a few seconds long.
FILES = sorted((CORPUS / "cutile-tests").glob("*.mlir"))[::10] + sorted(
    (CORPUS / "cutile").glob("*.mlir"))


def _interpreted(opdef):
    elems = asm_format.compile_format(asm_format.format_of(opdef))
    return lambda p, st: asm_format.parse_format(p, st, elems)


def _parse(text: str, *, interpreted: bool, monkeypatch) -> str:
    with monkeypatch.context() as m:
        if interpreted:
            m.setattr(parser, "compile_parser", _interpreted)
        try:
            return print_module(parser.parse_text(text, "t.mlir"), generic=True)
        except CompileError as e:
            return "error: " + "; ".join(str(d) for d in e.diagnostics)


@pytest.mark.skipif(not FILES, reason="corpus not found under ../shared/corpus")
def test_compiled_and_interpreted_formats_read_the_corpus_alike(monkeypatch):
    seen: set[str] = set()
    for path in FILES:
        text = path.read_text()
        fast = _parse(text, interpreted=False, monkeypatch=monkeypatch)
        slow = _parse(text, interpreted=True, monkeypatch=monkeypatch)
        assert fast == slow, path.name
        assert not fast.startswith("error"), fast
        seen.update(name for name in OPS if f'"cuda_tile.{name}"' in fast)
    assert len(seen) > 40, sorted(seen)  # the sample exercises most of the op table


@pytest.mark.parametrize("text", [
    # wrong operand type (the short path for single operands and cached types)
    "entry @k(%a: tile<f32>, %b: tile<i32>) {\n  %c = addf %a, %b : tile<f32>\n}\n",
    # undefined value, missing keyword, bad enum, wrong result count
    "entry @k(%a: tile<f32>) {\n  %c = addf %a, %z : tile<f32>\n}\n",
    "entry @k(%a: tile<f32>) {\n  %c = cmpf less_than %a, %a : tile<f32> -> tile<i1>\n}\n",
    "entry @k(%a: tile<f32>) {\n  %c = cmpf bogus ordered %a, %a : tile<f32> -> tile<i1>\n}\n",
    "entry @k(%a: tile<f32>) {\n  %c, %d = addf %a, %a : tile<f32>\n}\n",
    "entry @k(%a: tile<f32>) {\n  %c = addf %a %a : tile<f32>\n}\n",
])
def test_compiled_and_interpreted_formats_report_the_same_errors(text, monkeypatch):
    fast = _parse(text, interpreted=False, monkeypatch=monkeypatch)
    slow = _parse(text, interpreted=True, monkeypatch=monkeypatch)
    assert fast.startswith("error: ") and fast == slow


@pytest.mark.skipif(not FILES, reason="corpus not found under ../shared/corpus")
def test_compiled_and_interpreted_printers_print_alike(monkeypatch):
    from nanotile.ir import printer

    def interpreted(opdef):
        elems = asm_format.compile_format(asm_format.format_of(opdef))
        return lambda pr, op: asm_format.print_format(pr, op, opdef, elems)

    for path in FILES:
        module = parser.parse_text(path.read_text(), path.name)
        fast = print_module(module, debuginfo=True)
        with monkeypatch.context() as m:
            m.setattr(printer, "compile_printer", interpreted)
            slow = print_module(module, debuginfo=True)
        assert fast == slow, path.name
