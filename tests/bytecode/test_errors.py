"""Malformed bytecode gives one clean error naming a byte offset; the writer refuses IR
that its target version cannot hold. Expected messages are those of NVIDIA's tools
(tileiras/tileirdisasm 13.4, cuda-tile's reference tests); test_reader_errors.py has the
reader's messages one by one."""

from __future__ import annotations

import pytest

from nanotile.bytecode import wire as W
from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.diagnostics import CompileError
from nanotile.ir import attrs as A
from nanotile.ir import types as T
from nanotile.ir.core import Block, Module, Operation, Region, make_op
from nanotile.ir.enums import IntegerOverflow, RoundingMode, Signedness, SymbolVisibility
from nanotile.ir.parser import parse_text

from .corpus import CUTILE, REFERENCE_TESTS
from .forge import File, sample

VECTOR_ADD = CUTILE / "vector_add.tileirbc"
NEGI_13_1 = REFERENCE_TESTS / "versioning" / "Inputs" / "13.1" / "negi-op-13.1.tileirbc"
needs = pytest.mark.skipif(not VECTOR_ADD.is_file() or not NEGI_13_1.is_file(),
                           reason="corpus not found under ../shared/corpus")


def read_error(data: bytes) -> tuple[str, int | None]:
    with pytest.raises(CompileError) as info:
        read_bytecode(data, "bad.tileirbc")
    diag = info.value.diagnostics[0]
    assert diag.filename == "bad.tileirbc"
    return diag.message, diag.offset


@needs
@pytest.mark.parametrize("name, message", [
    ("invalid/invalid_magic_number.tileirbc", "invalid magic number"),
    ("invalid/unsupported_version.tileirbc", "unsupported Tile version 18.0.0"),
    ("invalid/excessive_section_length.tileirbc", "end section is not the last section"),
    ("versioning/Inputs/13.1/f4e2m1fn-in-13.1.tileirbc",
     "type 'Float4E2M1FN' requires bytecode version 13.3+, file version is 13.1"),
])
def test_reference_invalid_files(name, message):
    got, offset = read_error((REFERENCE_TESTS / name).read_bytes())
    assert message in got
    assert offset is not None


@needs
@pytest.mark.parametrize("minor", [0, 5, 99])
def test_unsupported_version_like_cuda_tile(minor):
    """cuda-tile's reader names the version after reading it (tileiras checks it before
    reading: "unsupported Tile IR bytecode version: 13.5")."""
    data = bytearray(VECTOR_ADD.read_bytes())
    data[9] = minor
    assert read_error(bytes(data)) == (f"unsupported Tile version 13.{minor}.0, this reader "
                                       "supports versions [13.1 - 13.4]", 12)


@needs
def test_every_truncation_is_a_clean_error():
    data = VECTOR_ADD.read_bytes()
    for n in range(len(data)):
        message, offset = read_error(data[:n])
        assert offset is not None and 0 <= offset <= n, (n, message)


@needs
def test_unknown_and_version_gated_opcodes():
    data = bytearray(NEGI_13_1.read_bytes())
    assert data[0x19] == 0x50  # the first negi's opcode
    data[0x19] = 26  # (cuda-tile reports after the field it read)
    assert read_error(bytes(data)) == ("unknown or unimplemented opcode: 26", 0x1A)
    data[0x19] = 0x6E  # atan2 arrived in 13.2
    assert read_error(bytes(data)) == ("unsupported opcode 110 for bytecode version 13.1", 0x1A)


def test_huge_counts_are_checked_before_allocating():
    """A string table claiming 2**62 entries is refused before anything is allocated."""
    f = File(sample())
    strings = f.payload(W.SEC_STRING)
    strings[:1] = bytes([0x80] * 8 + [0x40])  # varint 2**62
    left = len(strings) - 9
    assert read_error(f.bytes()) == (
        f"number of strings ({1 << 62}) exceeds the maximum of {left // 4} that can fit in "
        f"the remaining payload of {left} bytes.", File(f.bytes()).start(W.SEC_STRING) + 9)


def _entry(ops_builder, version_args=()) -> Module:
    """A module with one entry whose body is built by ``ops_builder(block)``."""
    block = Block()
    ops_builder(block)
    block.append(make_op("return", [], [], operand_segments=[0]))
    entry = make_op("entry", [], [], {"sym_name": "k",
                                      "function_type": T.FunctionType(())},
                    [Region([block])])
    block.parent = entry.regions[0]
    return Module(items=[entry])


def _const(block: Block, t: T.TileType, data: bytes) -> Operation:
    return block.append(make_op("constant", [], [t], {"value": A.DenseElementsAttr(t, data,
                                                                                    True)}))


I32 = T.TileType((), T.I32)
F32 = T.TileType((), T.F32)


def write_error(module: Module, version: tuple[int, int]) -> str:
    write_bytecode(module, (13, 4))  # the module itself is encodable
    with pytest.raises(CompileError) as info:
        write_bytecode(module, version)
    return info.value.diagnostics[0].message


def test_writer_refuses_newer_op():
    def body(b):
        x = _const(b, F32, b"\0\0\x80\x3f").results[0]
        n = _const(b, I32, b"\2\0\0\0").results[0]
        b.append(make_op("fpowi", [x, n], [F32]))
    assert write_error(_entry(body), (13, 3)) == (
        "operation 'cuda_tile.fpowi' is not available in bytecode version 13.3")


def test_writer_refuses_newer_type():
    t = T.TileType((2,), T.I4)
    assert "type 'Int4' requires bytecode version 13.3+" in write_error(
        _entry(lambda b: _const(b, t, b"\x21")), (13, 2))


def test_writer_refuses_newer_optional_attribute():
    def body(b):
        x = _const(b, F32, b"\0\0\x80\x3f").results[0]
        b.append(make_op("ftoi", [x], [I32], {"signedness": Signedness.signed,
                                              "rounding_mode": RoundingMode.zero,
                                              "saturating": True}))
    assert write_error(_entry(body), (13, 3)) == (
        "optional attribute 'saturating' is provided but requires bytecode version 13.4, "
        "targeting 13.3")


def test_writer_refuses_newer_attribute_value():
    def body(b):
        x = _const(b, I32, b"\1\0\0\0").results[0]
        b.append(make_op("negi", [x], [I32], {"overflow": IntegerOverflow.nsw}))
    assert "attribute 'overflow' requires bytecode version 13.2+" in write_error(
        _entry(body), (13, 1))
    # The default value is simply not written.
    def plain(b):
        x = _const(b, I32, b"\1\0\0\0").results[0]
        b.append(make_op("negi", [x], [I32], {"overflow": IntegerOverflow.none}))
    write_bytecode(_entry(plain), (13, 1))


def test_writer_refuses_used_newer_result_and_drops_unused_one():
    def body(b, use):
        p = b.append(make_op("print_tko", [], [T.TOKEN], {"str": "hi"},
                             operand_segments=[0, 0]))
        if use:
            b.append(make_op("join_tokens", [p.results[0], p.results[0]], [T.TOKEN],
                             operand_segments=[2]))
    assert write_error(_entry(lambda b: body(b, True)), (13, 1)) == (
        "result 'result_token' requires bytecode version 13.2 but is being used and "
        "targeting 13.1")
    back = read_bytecode(write_bytecode(_entry(lambda b: body(b, False)), (13, 1)), "x")
    printed = back.entries()[0].regions[0].blocks[0].ops[0]
    assert printed.name == "print_tko" and [str(r.type) for r in printed.results] == ["token"]


def test_writer_refuses_new_global_fields():
    def module(**attrs):
        t = T.TileType((1,), T.F32)
        g = Operation("global", attributes={"sym_name": "g", "value": A.DenseElementsAttr(
            t, b"\0\0\x80\x3f", False), **attrs})
        return Module(items=[g])
    assert write_error(module(constant=True), (13, 1)) == (
        "constant global `g` cannot be encoded in bytecode version 13.1 (the `constant` "
        "attribute requires bytecode 13.3+)")
    assert write_error(module(symbol_visibility=SymbolVisibility.private), (13, 2)) == (
        "global `g` uses non-public symbol visibility, which cannot be encoded in bytecode "
        "version 13.2 (requires bytecode 13.3+)")


@pytest.mark.parametrize("words, message", [
    ("global private @g", "global `g` uses non-public symbol visibility, which cannot be "
                          "encoded in bytecode version 13.2 (requires bytecode 13.3+)"),
    ("global constant @g", "constant global `g` cannot be encoded in bytecode version 13.2 "
                           "(the `constant` attribute requires bytecode 13.3+)"),
])
def test_writer_refuses_new_global_fields_at_the_global(words, message):
    """cuda-tile's writeGlobalSection: globalOp.emitError(), at the global."""
    module = parse_text("cuda_tile.module @m {\n  %s <f32: [1.0]> : tile<1xf32>\n}\n" % words,
                        "g.mlir")
    write_bytecode(module, (13, 3))
    with pytest.raises(CompileError) as info:
        write_bytecode(module, (13, 2))
    d = info.value.diagnostics[0]
    assert (d.message, d.filename, d.line, d.column) == (message, "g.mlir", 2, 3)


@pytest.mark.parametrize("loc, kind", [
    ('loc("n")', "NameLoc"),
    ('loc(fused["a.py":1:2, "b.py":3:4])', "FusedLoc"),
    ('loc(callsite("n" at "a.py":1:1))', "NameLoc"),  # a call site's callee checked too
])
def test_writer_refuses_unsupported_locations(loc, kind):
    """cuda-tile's validateDebugInfo/invalidLocError: op->emitError() at the op; only
    DILocAttr, CallSiteLoc, FileLineColLoc and UnknownLoc are encodable."""
    module = parse_text("cuda_tile.module @m {\n  entry @k() {\n"
                        f"    %c = constant <i32: 42> : tile<i32> {loc}\n"
                        "    return\n  }\n}\n", "l.mlir")
    with pytest.raises(CompileError) as info:
        write_bytecode(module, (13, 3))
    d = info.value.diagnostics[0]
    assert (d.message, d.filename, d.line, d.column) == (
        f"unsupported location, got {kind}, expected DILocAttr or CallSiteLoc", "l.mlir", 3, 10)


@pytest.mark.parametrize("version", [(13, 0), (13, 5), (12, 0)])
def test_writer_rejects_unsupported_versions(version):
    """cuda-tile's writeHeader, at the module."""
    module = parse_text("cuda_tile.module @m {\n}\n", "v.mlir")
    with pytest.raises(CompileError) as info:
        write_bytecode(module, version)
    d = info.value.diagnostics[0]
    assert d.message == (f"unsupported version requested {version[0]}.{version[1]}, must be "
                         "in range [13.1, 13.4]")
    assert (d.filename, d.line, d.column) == ("v.mlir", 1, 1)


def _unverified(text: str) -> Module:
    """``text`` read but not verified: what the Python API may hand the writer."""
    return parse_text(text, "w.mlir", allow_unregistered=True)


def _writer_error(module: Module):
    with pytest.raises(CompileError) as info:
        write_bytecode(module, (13, 4), "w.mlir")
    return info.value.diagnostics[0]


def test_writer_refuses_impure_ops_inside_reduce():
    """cuda-tile's writer walks every op before it writes: one inside a reduce or scan that
    is not pure is refused at its parent, with a remark at the op. (The verifier refuses
    the same module first, in its own words.)"""
    d = _writer_error(_unverified(
        "cuda_tile.module @m {\n"
        "  testing$func @k(%x: !cuda_tile.tile<4xf32>) {\n"
        "    %0 = reduce %x dim=0 identities=[0.0 : f32] : tile<4xf32> -> tile<f32>\n"
        "    (%a: tile<f32>, %b: tile<f32>) {\n"
        "      %t = print_tko \"x\" -> token\n"
        "      yield %a : tile<f32>\n"
        "    }\n"
        "  }\n"
        "}\n"))
    assert (d.message, d.line, d.column) == (
        "'cuda_tile.reduce' op only pure operations allowed", 3, 10)
    [remark] = d.notes
    assert (remark.severity, remark.message, remark.line, remark.column) == (
        "remark", "invalid op: cuda_tile.print_tko", 5, 12)


def test_writer_refuses_ops_of_other_dialects_at_the_module():
    d = _writer_error(_unverified(
        "cuda_tile.module @m {\n  entry @k() {\n    \"test.other\"() : () -> ()\n"
        "    return\n  }\n}\n"))
    assert (d.message, d.line, d.column) == (
        "'cuda_tile.module' op only ops from the 'cuda_tile' dialect are allowed", 1, 1)
    assert [(n.message, n.line, n.column) for n in d.notes] == [
        ("invalid op: test.other", 3, 5)]


def test_writer_refuses_a_module_item_that_is_not_a_function_or_global():
    block = Block()
    constant = _const(block, I32, b"\1\0\0\0")
    d = _writer_error(Module(items=[constant]))
    assert d.message == "'cuda_tile.module' op only function and global ops are allowed in the body"
    assert [n.message for n in d.notes] == ["invalid op: cuda_tile.constant"]


def test_writer_refuses_an_op_it_has_no_opcode_for():
    """An op of the dialect that the op table lacks, built through the API: cuda-tile's
    writer says so when it finds no opcode for it."""
    module = _entry(lambda b: b.append(make_op("cuda_tile.unknown", [], [])))
    assert _writer_error(module).message == ("operation not supported in bytecode (missing "
                                             "from BytecodeOpcodes.td)")


def _nested_loops(block: Block, depth: int) -> None:
    if depth:
        inner = Block()
        _nested_loops(inner, depth - 1)
        inner.append(make_op("continue", [], [], operand_segments=[0]))
        block.append(make_op("loop", [], [], regions=[Region([inner])],
                             operand_segments=[0]))


def test_nesting_depth_is_bounded():
    """The writer, the reader and the text parser refuse the same depth: regions nested
    more than MAX_NESTING deep, the entry's body counting as the first."""
    from nanotile.ir.limits import MAX_NESTING
    from nanotile.ir.parser import parse_text
    from nanotile.ir.printer import print_module

    deepest = write_bytecode(_entry(lambda b: _nested_loops(b, MAX_NESTING - 1)))
    module = read_bytecode(deepest, "x")
    assert write_bytecode(module) == deepest
    assert print_module(parse_text(print_module(module), "x.mlir")) == print_module(module)
    with pytest.raises(CompileError, match=f"regions nested too deeply \\(limit {MAX_NESTING}"):
        write_bytecode(_entry(lambda b: _nested_loops(b, MAX_NESTING)))
    with pytest.raises(CompileError, match="regions nested too deeply"):
        parse_text(print_module(_entry(lambda b: _nested_loops(b, MAX_NESTING))), "deep.mlir")
    # a file written by another tool 100 deep: refused by the reader, at a byte offset
    message, offset = read_error(_deeper())
    assert "nested too deeply" in message and offset


def _deeper() -> bytes:
    """Loops 100 deep, encoded by a writer without the limit (its check switched off)."""
    from nanotile.bytecode import writer as bytecode_writer

    original = bytecode_writer.W.MAX_NESTING
    bytecode_writer.W.MAX_NESTING = 1000
    try:
        return write_bytecode(_entry(lambda b: _nested_loops(b, 100)))
    finally:
        bytecode_writer.W.MAX_NESTING = original
