"""Every corpus kernel decodes, and re-encodes byte for byte at its own version.

The corpus files were written by NVIDIA's cuTile 1.7.0 (versions 13.1 to 13.4), so a
byte-exact round trip shows the reader kept everything and the writer lays it out as
cuTile does: section order and alignment, table order, flags, version-gated fields.
"""

from __future__ import annotations

import re

import pytest

from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.diagnostics import CompileError
from nanotile.ir import attrs as A

from .corpus import corpus_files, file_id

FILES = corpus_files()
needs_corpus = pytest.mark.skipif(not FILES, reason="corpus not found under ../shared/corpus")


@needs_corpus
def test_corpus_is_complete():
    # A silently missing folder would make the parametrised tests below vacuous.
    assert len(FILES) >= 1500
    versions = {path.read_bytes()[8:10] for path in FILES}
    assert versions == {b"\x0d\x01", b"\x0d\x02", b"\x0d\x03", b"\x0d\x04"}


@needs_corpus
@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_reencode_is_byte_exact(path):
    data = path.read_bytes()
    module = read_bytecode(data, str(path))
    assert module.entries(), "every corpus file defines a kernel"
    again = write_bytecode(module, (data[8], data[9]))
    if again != data:
        at = next(i for i, (a, b) in enumerate(zip(again, data)) if a != b) if len(
            again) == len(data) else min(len(again), len(data))
        pytest.fail(f"re-encoding differs from byte {at} (sizes {len(again)} vs {len(data)})")


@needs_corpus
def test_debug_info_is_decoded():
    """Op locations agree with tileirdisasm -g's listing (vector_add.debug.mlir)."""
    path = next(p for p in FILES if p.name == "vector_add.tileirbc")
    listing = path.with_name("vector_add.debug.mlir").read_text()
    module = read_bytecode(path.read_bytes(), str(path))
    entry = module.entries()[0]
    assert isinstance(entry.location, A.DILocAttr)
    assert isinstance(entry.location.scope, A.DISubprogramAttr)
    assert entry.location.scope.name == "vector_add"
    ops = list(entry.walk())[1:] + [entry]  # the entry's own loc is printed after its `}`
    # tileirdisasm prints `loc(#locN)` after each op; #locN is a di_loc or `loc(unknown)`.
    printed = re.findall(r"loc\(#loc(\d+)\)$", listing, re.MULTILINE)
    aliases = dict(re.findall(r"^#loc(\d*) = (.*)$", listing, re.MULTILINE))
    assert len(printed) == len(ops)
    for op, alias in zip(ops, printed):
        if aliases[alias] == "loc(unknown)":
            assert op.location is None, op.name
            continue
        inner = re.match(r"#cuda_tile.di_loc<#loc(\d*) in", aliases[alias]).group(1)
        file, line, col = re.match(r'loc\("(.*)":(\d+):(\d+)\)', aliases[inner]).groups()
        assert (op.location.filename, op.location.line, op.location.column) == (
            file, int(line), int(col)), op.name


@needs_corpus
def test_other_versions_round_trip():
    """A 13.4 file written at 13.1-13.3 reads back and re-encodes identically."""
    path = next(p for p in FILES if p.name == "vector_add.tileirbc")
    module = read_bytecode(path.read_bytes(), str(path))
    for version in ((13, 1), (13, 2), (13, 3), (13, 4)):
        data = write_bytecode(module, version)
        assert data[8:10] == bytes(version)
        back = read_bytecode(data, "x")
        assert write_bytecode(back, version) == data
        assert [op.name for op in back.walk()] == [op.name for op in module.walk()]


@needs_corpus
def test_other_versions_are_lossless():
    """Every corpus file written at every other version (where that version can hold it)
    reads back and re-encodes at its own version to the original bytes. Refusals must
    name what the target version lacks."""
    converted = refused = 0
    for path in FILES:
        data = path.read_bytes()
        own = (data[8], data[9])
        module = read_bytecode(data, str(path))
        for minor in (1, 2, 3, 4):
            if (13, minor) == own:
                continue
            try:
                other = write_bytecode(module, (13, minor))
            except CompileError as e:
                assert "version" in e.diagnostics[0].message, e.diagnostics[0].message
                refused += 1
                continue
            assert write_bytecode(read_bytecode(other, "x"), own) == data, (path.name, minor)
            converted += 1
    assert converted > 4000 and refused < converted // 10


def test_a_one_element_i1_constant_is_a_splat_however_it_is_packed():
    """Found by bench/fuzz.py: a tile<1xi1> constant whose byte is 0x01 (one packed bit,
    not MLIR's splat byte 0xFF) read as a one-element list, printed `[true]`, and read
    back as the splat `true` (tileirdisasm prints `true` for that file)."""
    from nanotile.bytecode.read_tables import _dense_value
    from nanotile.ir import types as T

    one = T.TileType((1,), T.ELEMENT_TYPES["i1"])
    assert _dense_value(b"\x01", one) == A.DenseElementsAttr(one, b"\xff", True)
    assert _dense_value(b"\x00", one) == A.DenseElementsAttr(one, b"\x00", True)
    four = T.TileType((4,), T.ELEMENT_TYPES["i1"])
    assert _dense_value(b"\x05", four) == A.DenseElementsAttr(four, b"\x05", False)
