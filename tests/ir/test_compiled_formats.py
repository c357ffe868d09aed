"""The compiled op printers (asm_format.compile_printer) print exactly what the format
interpreter (asm_format.print_format) prints. The interpreter is the reference reading of
the op table's ``asm`` strings; the compiled closures are its fast path."""

from __future__ import annotations

import pytest

from nanotile.ir import asm_format, parser
from nanotile.ir.printer import print_module

from .helpers import CORPUS

# Every op of the op table appears in some of these (tileirdisasm prints of cuTile kernels
# and of the reference tests' inputs); a sample keeps the test a few seconds long.
FILES = sorted((CORPUS / "cutile-tests").glob("*.mlir"))[::10] + sorted(
    (CORPUS / "cutile").glob("*.mlir"))


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
