"""NVIDIA's test-only bytecode versions (250.0, 250.1) and test-only ops, and the writer's
refusals of what it cannot encode (builtin types, ops of other dialects).

Facts from cuda-tile (TestingOps.td, BytecodeOpcodes.td): the ops' opcodes are 0x3000
and 0x3002; flags bits are assigned in version order, attributes before operands; a
250.1 result that is used cannot be written for 250.0. The reference lit tests
(test/Bytecode/versioning/test_*.mlir) run through tests/conformance too.
"""

from __future__ import annotations

import pytest

from nanotile.bytecode import wire as W
from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.diagnostics import CompileError
from nanotile.ir.optable import OPS, OPS_BY_OPCODE, lookup
from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module
from nanotile.translate import main

EVOLUTION = """cuda_tile.module @m {
  entry @k() {
    %input = constant <f32: [1.0, 2.0]> : !cuda_tile.tile<2xf32>
    %t = make_token : !cuda_tile.token
    %r = testing$bytecode_test_evolution (%input : !cuda_tile.tile<2xf32>) new_attr = 7 token = %t : !cuda_tile.token -> !cuda_tile.token
    return
  }
}
"""


def _module(body: str):
    return parse_text(f"cuda_tile.module @m {{\n  entry @k() {{\n{body}\n    return\n  }}\n}}\n",
                      "t.mlir")


def _write_error(body: str, version: tuple[int, int]) -> str:
    with pytest.raises(CompileError) as e:
        write_bytecode(_module(body), version)
    return str(e.value)


def test_testing_ops_are_kept_out_of_the_production_table():
    assert not any(name.startswith("testing$") for name in OPS)
    assert lookup("testing$bytecode_test_evolution").opcode == 0x3002
    assert OPS_BY_OPCODE[0x3000].name == "testing$bytecode_test_new_attribute"
    assert all(d.since.startswith("13.") for d in OPS.values())


def test_versions_order_testing_above_production():
    assert W.LATEST == (13, 4) == W.SUPPORTED_VERSIONS[-1]
    assert all(t > v for t in W.TESTING_VERSIONS for v in W.SUPPORTED_VERSIONS)
    assert W.supported_range() == "[13.1 - 13.4]"


def test_default_version_is_still_13_4():
    blob = write_bytecode(_module("    %t = make_token : !cuda_tile.token"))
    assert blob[8:10] == bytes([13, 4])


def test_testing_op_refused_by_production_versions():
    msg = _write_error("    testing$bytecode_test_new_attribute new_param = 1", (13, 4))
    assert ("operation 'cuda_tile.testing$bytecode_test_new_attribute' is not available in "
            "bytecode version 13.4") in msg


def test_250_1_attribute_refused_at_250_0_unless_default():
    msg = _write_error("    testing$bytecode_test_new_attribute new_param = 123", (250, 0))
    assert "attribute 'new_param' requires bytecode version 250.1+, but targeting 250.0" in msg
    # The default (42) is simply not written.
    mod = read_bytecode(write_bytecode(
        _module("    testing$bytecode_test_new_attribute new_param = 42"), (250, 0)), "x")
    assert "bytecode_test_new_attribute\n" in print_module(mod)


def test_250_1_round_trip_keeps_new_parts():
    blob = write_bytecode(parse_text(EVOLUTION, "t.mlir"), (250, 1))
    assert blob[8:10] == bytes([250, 1])
    text = print_module(read_bytecode(blob, "x"))
    assert ("testing$bytecode_test_evolution(%0 : !cuda_tile.tile<2xf32>) new_attr = 7 "
            "token = %1 : token -> token") in text


def test_evolution_flags_bits_follow_version_order():
    # opcode 0x3002 (varint 82 60), one result type id, then the flags varint:
    # bit 0 = priority (250.0), bits 1, 2 = new_attr, test_attr (250.1), bit 3 = the token.
    blob = write_bytecode(parse_text(EVOLUTION, "t.mlir"), (250, 1))
    at = blob.index(bytes([0x82, 0x60]))
    assert blob[at + 3] == 0b1010
    # A reserved bit (priority, not modelled) is refused, not ignored.
    bad = bytearray(blob)
    bad[at + 3] |= 1
    with pytest.raises(CompileError, match="'priority' is not supported"):
        read_bytecode(bytes(bad), "x")


def test_used_250_1_result_and_operand_refused_at_250_0():
    used = ("    %i = constant <f32: [1.0]> : !cuda_tile.tile<1xf32>\n"
            "    %r = testing$bytecode_test_evolution (%i : !cuda_tile.tile<1xf32>) "
            "-> !cuda_tile.token\n    %j = join_tokens %r, %r : !cuda_tile.token")
    assert ("result 'result_token' requires bytecode version 250.1 but is being used and "
            "targeting 250.0") in _write_error(used, (250, 0))
    with pytest.raises(CompileError, match="optional operand 'optional_token' is provided "
                       "but requires bytecode version 250.1, targeting 250.0"):
        write_bytecode(parse_text(EVOLUTION.replace("new_attr = 7 ", ""), "t.mlir"),
                       (250, 0))


def test_unused_250_1_result_comes_back_at_250_0():
    unused = ("    %i = constant <f32: [1.0]> : !cuda_tile.tile<1xf32>\n"
              "    %r = testing$bytecode_test_evolution (%i : !cuda_tile.tile<1xf32>) "
              "-> !cuda_tile.token")
    text = print_module(read_bytecode(write_bytecode(_module(unused), (250, 0)), "x"))
    assert "testing$bytecode_test_evolution(%0 : !cuda_tile.tile<1xf32>) -> token" in text


def test_translate_accepts_testing_versions_and_lists_them(tmp_path, capsys):
    src = tmp_path / "t.mlir"
    src.write_text(EVOLUTION)
    assert main(["-test-cudatile-roundtrip", "-bytecode-version=250.1", str(src)]) == 0
    assert "new_attr = 7" in capsys.readouterr().out
    assert main(["-mlir-to-cudatilebc", "-bytecode-version=250.2", str(src)]) != 0
    assert "the supported versions are [13.1 - 13.4]" in capsys.readouterr().err


def test_builtin_tensor_type_parses_but_is_not_written():
    mod = parse_text("cuda_tile.module @m {\n  entry @k(%a : tensor<2xi16>) {\n    return\n"
                     "  }\n}\n", "t.mlir")
    assert "tensor<2xi16>" in print_module(mod)
    with pytest.raises(CompileError, match="unsupported type in bytecode writer"):
        write_bytecode(mod)


def test_unregistered_op_needs_the_flag_and_is_not_written(tmp_path, capsys):
    src = tmp_path / "u.mlir"
    src.write_text('cuda_tile.module @m {\n  entry @k() {\n    "test.other"() : () -> ()\n'
                   "    return\n  }\n}\n")
    assert main(["-mlir-to-cudatilebc", str(src)]) == 1
    assert "unregistered operation 'test.other'" in capsys.readouterr().err
    out = tmp_path / "u.tileirbc"
    assert main(["-mlir-to-cudatilebc", "-allow-unregistered-dialect", str(src), "-o",
                 str(out)]) == 1
    err = capsys.readouterr().err
    # The error is at the module (emitOpError: the op's name first), the remark at the op
    # (as cuda-tile-translate reports).
    assert ("u.mlir:1:1: error: 'cuda_tile.module' op only ops from the 'cuda_tile' dialect "
            "are allowed") in err
    assert "u.mlir:3:5: remark: invalid op: test.other" in err
    assert not out.exists()
