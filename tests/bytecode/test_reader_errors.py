"""The reader's errors are cuda-tile's (lib/Bytecode/Reader/BytecodeReader.cpp 13.3 and
the readers it generates): the same message at the same byte, with cuda-tile's enclosing
steps as notes. Each case mutates a small file that nanotile's writer made from an inline
kernel (tests/bytecode/forge.py) and names what reading it must report: the message, its
file offset (after the field that failed, as cuda-tile counts), and the notes' messages
(nanotile's explanation of a failure cuda-tile reports without a message comes first).

Where NVIDIA's tileirdisasm is installed, its output for the same inputs is compared too;
it is 13.4's reader, which departs from 13.3's in a few places (listed in DIFFERS_IN_13_4).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable

import pytest

from nanotile.bytecode import wire as W
from nanotile.bytecode.reader import cuda_tile_chain, read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.ir.parser import parse_text

from .corpus import nvidia_tool
from .forge import (CONSTANT, DEBUG_KERNEL, FUNC, GLOBAL, KERNEL, PRODUCER, STRING, TYPE, File,
                    body, error, sample, varint, with_body)

S = sample()  # 13.3; its function body starts at byte 35 (tests below name its bytes)
# with a producer ("p", string 5), and a get_global at byte 151 before the return
SG = sample(kernel=KERNEL.replace("  return\n}", "  %gp = get_global @g : tile<ptr<f32>>\n"
                                                 "  return\n}"), producer="p")
S131 = sample((13, 1))
D = sample(kernel=DEBUG_KERNEL)
END = len(S)  # where cuda-tile's reader of the whole file stands once sections are read
BODY_FAILED = "failed to parse function body for function 'k'"
CREATE_FAILED = "failed to create function from bytecode"
IN_BODY = [BODY_FAILED, CREATE_FAILED]
# an op of the loop's body (the for op is op 9 of the function)
IN_LOOP = ["failed to parse block 0 in region.", "failed to parse region 0", *IN_BODY]
# an op of the if's regions (op 2 of the loop's body)
IN_IF = ["failed to parse operation 2 in block.", *IN_LOOP]


def put(data: bytes, pos: int, new: bytes | int) -> bytes:
    new = bytes([new]) if isinstance(new, int) else new
    return data[:pos] + new + data[pos + len(new):]


def in_body(pos: int, new: bytes | int, data: bytes = S) -> bytes:
    """``data`` with the function body's byte ``pos`` (file offset) replaced."""
    return put(data, pos, new)


def section(data: bytes, sid: int, edit: Callable[[bytearray], None],
            alignment: object = "keep") -> bytes:
    f = File(data)
    s = next(s for s in f.sections if s[0] == sid)
    edit(s[2])
    if alignment != "keep":
        s[1] = alignment
    return f.bytes()


def relabel(data: bytes, sid: int, new_sid: int) -> bytes:
    f = File(data)
    next(s for s in f.sections if s[0] == sid)[0] = new_sid
    return f.bytes()


def set_u32(payload: bytearray, pos: int, value: int) -> None:
    payload[pos:pos + 4] = value.to_bytes(4, "little")


def set_u64(payload: bytearray, pos: int, value: int) -> None:
    payload[pos:pos + 8] = value.to_bytes(8, "little")


def body_edit(data: bytes, edit: Callable[[bytes], bytes]) -> bytes:
    start, end = body(data)
    return with_body(data, edit(data[start:end]))


STRING_AT = File(S).start(STRING)
STRING_HEADER = S.rindex(b"\x81\x37\x04", 0, STRING_AT)  # id, length 55, alignment 4
TYPE_AT = File(S).start(TYPE)
CONSTANT_AT = File(S).start(CONSTANT)
FUNC_AT = File(S).start(FUNC)
TYPE_DATA = TYPE_AT + 4 + 4 * 14  # the 14 entries follow their offsets
HUGE = b"\xff\xff\xff\xff\x0f"  # 2**32 - 1


CASES: dict[str, tuple[Callable[[], bytes], str, int, list[str]]] = {
    # ---- header and section framing
    "magic": (lambda: put(S, 3, 0x41),
              "invalid magic number at position 3, got 65 expected 108", 4,
              ["failed to parse bytecode header"]),
    "version": (lambda: put(S, 9, 5),
                "unsupported Tile version 13.5.0, this reader supports versions [13.1 - 13.4]",
                12, ["failed to parse bytecode header"]),
    "header-cut": (lambda: S[:10], "failed to parse bytecode header", 10,
                   ["truncated: the file ends inside a 16-bit integer"]),
    "no-sections": (lambda: S[:12], "unexpected end of data while reading section header", 12,
                    ["failed to parse section header"]),
    "section-id": (lambda: put(S, 12, 0x7F), "unknown section ID: 127", 13,
                   ["failed to parse section header"]),
    "section-length-cut": (lambda: S[:13], "failed to read section length", 13,
                           ["truncated: the file ends inside a varint",
                            "failed to parse section header"]),
    "section-length": (lambda: put(S, 13, b"\xff\x7f"),
                       f"section length 16383 exceeds remaining data size {END - 15}", 15,
                       ["failed to parse section header"]),
    "alignment": (lambda: put(S, 15, 3), "invalid alignment value: 3", 16,
                  ["failed to parse section header"]),
    "end-aligned": (lambda: put(S, END - 1, 0x80),
                    "end section should not have alignment flag set", END,
                    ["failed to parse section header"]),
    "end-not-last": (lambda: S + b"\x00", "end section is not the last section", END, []),
    "alignment-too-small": (
        lambda: section(S, FUNC, lambda p: None, alignment=4),
        "section 2 must have alignment that is a multiple of 8 bytes, but has alignment of 4",
        16, []),
    "alignment-missing": (
        lambda: section(S, STRING, lambda p: None, alignment=None),
        "section 1 must have alignment that is a multiple of 4 bytes, but has no alignment "
        "flag set", STRING_AT - 2, []),
    "section-past-padding": (
        # the string section (the last) claims the bytes up to the end of the file, which
        # fit before its alignment field and padding but not after them
        lambda: put(S, STRING_HEADER + 1, END - (STRING_HEADER + 2)),
        f"section length {END - STRING_HEADER - 2} exceeds remaining bytecode data. "
        f"{END - STRING_AT}", STRING_AT, []),
    "no-string-section": (lambda: relabel(S, STRING, PRODUCER), "string section is mandatory",
                          END, []),
    "no-function-section": (lambda: relabel(S, FUNC, PRODUCER),
                            "function section is mandatory", END, []),
    # ---- strings
    "string-count": (lambda: put(S, STRING_AT, 0x7F),
                     "number of strings (127) exceeds the maximum of 13 that can fit in the "
                     "remaining payload of 54 bytes.", STRING_AT + 1,
                     ["failed to parse string section"]),
    "function-name": (lambda: put(S, FUNC_AT + 1, 9), "string index 9 out of bounds", END,
                      ["failed to get function name string at index 9", CREATE_FAILED]),
    "function-name-empty": (lambda: section(S, STRING, lambda p: set_u32(p, 8, 0)),
                            "function name at index 0 is empty", END, [CREATE_FAILED]),
    # ---- types
    "type-count": (lambda: put(S, TYPE_AT, 0x7F),
                   "number of types (127) exceeds the maximum of 34 that can fit in the "
                   "remaining payload of 139 bytes.", TYPE_AT + 1,
                   ["failed to parse type section"]),
    "type-tag": (lambda: put(S, TYPE_DATA + 20, 0x63), "unknown type tag: 99", TYPE_DATA + 21,
                 ["failed to get result type 0 for MakeTokenOp", *IN_BODY]),
    "result-type-id": (lambda: in_body(36, 0x63), "failed to get result type 0 for MakeTokenOp",
                       37, ["type id 99 is out of range (the type table has 14 entries)",
                            *IN_BODY]),
    "type-too-new": (lambda: put(S131, S131.index(b"\x0d\x02\x00\x0d") + 1, 0),
                     "", 0, []),  # filled below (the 13.1 file's layout differs)
    "tile-shape": (lambda: put(S, TYPE_DATA + 55 + 3, 3),
                   "all dimensions must be powers of two, got 3", TYPE_DATA + 66,
                   ["failed to get result type 0 for ConstantOp", *IN_BODY]),
    "tensor-view-stride": (lambda: put(S, TYPE_DATA + 21 + 12, 0),
                           "dimensions must have strictly positive constant strides but got "
                           "[0]", TYPE_DATA + 41,
                           ["failed to get result type 0 for MakeTensorViewOp", *IN_BODY]),
    "not-a-tensor-view": (lambda: put(S, TYPE_DATA + 41 + 7, 5),
                          "expected ::mlir::cuda_tile::TensorViewType but got "
                          "'!cuda_tile.tile<i32>'", TYPE_DATA + 49,
                          ["failed to get result type 0 for MakePartitionViewOp", *IN_BODY]),
    "signature-index": (lambda: put(S, FUNC_AT + 2, 0x63),
                        "function signature index 99 out of bounds for function 'k'", END,
                        [CREATE_FAILED]),
    "signature-type": (lambda: put(S, FUNC_AT + 2, 5),
                       "function signature index 5"
                       " does not refer to a function type for function 'k'"
                       ", got type: '!cuda_tile.tile<i32>'", END, [CREATE_FAILED]),
    "signature-parameter": (lambda: put(S, TYPE_DATA + 14 + 2, 0x63),
                            "failed to get parameter type", TYPE_DATA + 17,
                            ["type id 99 is out of range (the type table has 14 entries)",
                             "failed to parse type at index 7 for function 'k", CREATE_FAILED]),
    # ---- constants
    "constant-index": (lambda: in_body(51, 0x63), "constant index 99 out of bounds", 52,
                       ["failed to parse attribute 'value'", *IN_BODY]),
    "constant-size": (lambda: put(S, CONSTANT_AT + 32, 3),
                      "failed to validate buffer size and format", CONSTANT_AT + 36,
                      ["failed to parse attribute 'value'", *IN_BODY]),
    "constant-order": (lambda: section(S, CONSTANT, lambda p: set_u64(p, 16, 12)),
                       "invalid constant start indices: end (10) is less than start (12) for "
                       "constant 1", CONSTANT_AT + 32, ["failed to parse constant section"]),
    "constant-beyond": (lambda: section(S, CONSTANT, lambda p: set_u64(p, 24, 40)),
                        "constant 1 extends beyond available data: size=35, start=5, total "
                        "data size=19", CONSTANT_AT + 32, ["failed to parse constant section"]),
    "constant-count": (lambda: put(S, CONSTANT_AT, 7), "insufficient data for constant indices",
                       CONSTANT_AT + 8, ["failed to parse constant section"]),
    # ---- globals
    "global-count": (lambda: section(S, GLOBAL, lambda p: p.__setitem__(0, 0x7F)),
                     "number of globals (127) exceeds the maximum of 1 that can fit in the "
                     "remaining payload of 6 bytes.", File(S).start(GLOBAL) + 1,
                     ["failed to parse global section"]),
    "global-constant": (lambda: section(S, GLOBAL, lambda p: p.__setitem__(3, 9)),
                        "global value constant index out of bounds", END,
                        ["failed to create global from bytecode"]),
    "global-name": (lambda: section(S, GLOBAL, lambda p: p.__setitem__(1, 9)),
                    "string index 9 out of bounds", END,
                    ["failed to get global symbol name string for index 9",
                     "failed to create global from bytecode"]),
    "global-type": (lambda: section(S, GLOBAL, lambda p: p.__setitem__(2, 4)),
                    "expect Cuda Tile integer or float type but got: "
                    "'!cuda_tile.tile<ptr<f32>>'", CONSTANT_AT + 42,
                    ["failed to create global from bytecode"]),
    "global-value": (lambda: section(S, GLOBAL, lambda p: p.__setitem__(2, 5)),
                     "failed to validate buffer size and format", CONSTANT_AT + 51,
                     ["failed to create global from bytecode"]),
    "global-visibility": (lambda: section(S, GLOBAL, lambda p: p.__setitem__(5, 5)),
                          "invalid symbol visibility value: 5", END,
                          ["failed to create global from bytecode"]),
    # ---- functions and their optimization hints
    "function-count": (lambda: section(S, FUNC, lambda p: p.__setitem__(
                           slice(0, 1), varint(1000))),
                       "number of functions (1000) exceeds payload size (139)", FUNC_AT + 2,
                       ["failed to parse function section"]),
    "body-length": (lambda: put(S, 34, 0x7F),
                    "function body length 127 exceeds remaining bytecode data (119 bytes)", 35,
                    ["failed to parse function section"]),
    "hints-tag": (lambda: put(S, 21, 0x63),
                  "unsupported AttributeTag 99 for self-contained attribute", 22,
                  ["failed to parse function section"]),
    "hints-kind": (lambda: put(S, 21, 0x0A),
                   "invalid optimization hints attribute for function 'k'", END,
                   [CREATE_FAILED]),
    "hints-value": (lambda: put(S, 24, 0x03),
                    "expected dictionary attribute for optimization_hints entry `sm_100` got "
                    "value=true", 26,
                    ["failed to parse OptimizationHintsAttr", "failed to parse function section"]),
    "hints-duplicate": (lambda: put(S, 30, 0x02),
                        'failed to parse DictionaryAttr, duplicate key found: "num_cta_in_cga"',
                        34, ["failed to parse DictionaryAttr value for key sm_100",
                             "failed to parse function section"]),
    "hints-empty-key": (lambda: section(S, STRING, lambda p: set_u32(p, 16, 7)),
                        "invalid empty attribute name for DictionaryAttr element 0", 27,
                        ["failed to parse DictionaryAttr value for key sm_100",
                         "failed to parse function section"]),
    "hints-key": (lambda: put(S, 26, 0x63), "string index 99 out of bounds", 27,
                  ["failed to read key for DictionaryAttr element 0",
                   "failed to parse DictionaryAttr value for key sm_100",
                   "failed to parse function section"]),
    # ---- the op stream
    "opcode": (lambda: in_body(35, 26), "unknown or unimplemented opcode: 26", 36, IN_BODY),
    "opcode-too-new": (lambda: put(S131, body(S131)[0], 0x6E),
                       "unsupported opcode 110 for bytecode version 13.1", body(S131)[0] + 1,
                       IN_BODY),
    "opcode-cut": (lambda: body_edit(S, lambda b: b + b"\x80"),
                   "failed to read operation opcode.", 0, []),  # filled below
    "enum": (lambda: in_body(57, 9), "invalid integer value for enum type: 9", 58,
             ["failed to parse attribute 'overflow'", *IN_BODY]),
    "operand": (lambda: in_body(58, 0x63), "operand index 99 out of bounds (size=8) for "
                "operand 0", 59, IN_BODY),
    "operand-count": (lambda: body_edit(S, lambda b: b[:42] + HUGE + b[43:]),
                      "varint value exceeds maximum supported capacity. (expected value less "
                      "than 4294967294, got 4294967295).", 82,
                      ["failed to read operand count", *IN_BODY]),
    "segment-operand": (lambda: in_body(65, 0x63),
                        "operand index 99 out of bounds (size=9) for dynamicShape segment, "
                        "element 0", 66, IN_BODY),
    "segment-size": (lambda: body_edit(S, lambda b: b[:29]),
                     "failed to read actual size for variadic ODS segment 'dynamicShape' of op "
                     "'cuda_tile.make_tensor_view'", 64,
                     ["truncated: the body of function 'k' ends inside a varint", *IN_BODY]),
    "flags": (lambda: body_edit(S, lambda b: b[:57]), "failed to read flags field", 92,
              ["truncated: the body of function 'k' ends inside a varint",
               "failed to parse operation 0 in block.", *IN_LOOP]),
    "regions": (lambda: in_body(108, 3), "cuda_tile.if op expected 2 regions, got 3", 109,
                ["failed to parse operation 2 in block.", *IN_LOOP]),
    "terminator": (lambda: in_body(111, 1),
                   "invalid block structure: block is expected to have a terminator "
                   "operation, but the last operation 'cuda_tile.addf' is not a terminator.",
                   118, ["failed to parse block 0 in region.", "failed to parse region 0",
                         *IN_IF]),
    "empty-block": (lambda: in_body(124, 0),
                    "invalid block structure: block is expected to have a terminator "
                    "operation, but it is empty", 125,
                    ["failed to parse block 0 in region.", "failed to parse region 1",
                     *IN_IF]),
    "block-argument": (lambda: in_body(85, 0x63), "failed to read block argument type: 0", 86,
                       ["type id 99 is out of range (the type table has 14 entries)",
                        *IN_LOOP]),
    "i32-array": (lambda: in_body(146, b"\x00\x00\x00\x80"),
                  "array contains unsupported value -2147483648", 150,
                  ["failed to parse attribute 'permutation'", *IN_BODY]),
    "predicate-kind": (lambda: in_body(39, 0x03),
                       "failed to cast parsed attribute to AssumePredicateAttrInterface", 41,
                       ["failed to parse attribute 'predicate'", *IN_BODY]),
    "predicate-tag": (lambda: in_body(39, 0x63),
                      "unsupported AttributeTag 99 for self-contained attribute", 40,
                      ["failed to parse self-contained attribute for "
                       "AssumePredicateAttrInterface", "failed to parse attribute 'predicate'",
                       *IN_BODY]),
}


def hints(value: bytes, cut: bool = False, f8: int | None = None) -> bytes:
    """S whose hint sm_100.num_cta_in_cga is ``value`` (a self-contained attribute, at
    byte HINT); ``cut``: the function section ends right after it; ``f8``: type 0 (i1)
    becomes the float type of this tag."""
    start, end = body(S)
    f = File(S if f8 is None else put(S, TYPE_DATA, f8))
    record = bytes([1, 0, 7, 6, 1, 0x0B, 1, 1, 0x0A, 1, 2]) + value
    f.payload(FUNC)[:] = record if cut else record + varint(end - start) + S[start:end]
    return f.bytes()


def globals_(payload: bytes) -> bytes:
    return section(S, GLOBAL, lambda p: p.__setitem__(slice(None), payload))


HINT = FUNC_AT + 11
GLOBAL_AT = File(S).start(GLOBAL)
IN_HINT = ["failed to parse DictionaryAttr value for key num_cta_in_cga",
           "failed to parse DictionaryAttr value for key sm_100",
           "failed to parse function section"]
CUT = "truncated: the function section ends inside a "
BODY_CUT = "truncated: the body of function 'k' ends inside a varint"
GLOBAL_CUT = ["truncated: the global section ends inside a varint",
              "failed to parse global section"]
TYPE_CUT = "truncated: the type table entry {} ends inside a varint"
SIGNATURE_FAILED = ["failed to parse type at index 7 for function 'k", CREATE_FAILED]
CASES.update({
    # ---- fields cut off by the end of their slice, table by table
    "global-count-cut": (lambda: globals_(b"\x80"), "failed to read number of global.",
                         GLOBAL_AT + 1, GLOBAL_CUT),
    "global-name-cut": (lambda: globals_(b"\x01\x80\x80\x80\x80\x80\x80"),
                        "failed to read global symbol name string.", GLOBAL_AT + 7, GLOBAL_CUT),
    "global-type-cut": (lambda: globals_(b"\x01\x04\x80\x80\x80\x80\x80"),
                        "failed to read global value type", GLOBAL_AT + 7, GLOBAL_CUT),
    "global-constant-cut": (lambda: globals_(b"\x01\x04\x0d\x80\x80\x80\x80"),
                            "failed to read global value constant index", GLOBAL_AT + 7,
                            GLOBAL_CUT),
    "global-alignment-cut": (lambda: globals_(b"\x01\x04\x0d\x02\x80\x80\x80"),
                             "failed to read global alignment", GLOBAL_AT + 7, GLOBAL_CUT),
    "global-visibility-cut": (lambda: globals_(b"\x01\x04\x0d\x02\x00\x80\x80"),
                              "failed to read global symbol visibility", GLOBAL_AT + 7,
                              GLOBAL_CUT),
    "global-flag-cut": (lambda: globals_(b"\x01\x04\x0d\x02\x00\x00\x80"),
                        "failed to read global constant flag", GLOBAL_AT + 7, GLOBAL_CUT),
    "global-empty-name": (lambda: section(S, STRING, lambda p: set_u32(p, 20, 31)),
                          "global symbol name at index 4 is empty", END,
                          ["failed to create global from bytecode"]),
    "constant-size-cut": (lambda: put(S, CONSTANT_AT + 32, b"\x84\x81\x80\x80\x80"),
                          "failed to read the size of the data buffer", CONSTANT_AT + 37,
                          ["truncated: the constant 0 ends inside a varint",
                           "failed to parse attribute 'value'", *IN_BODY]),
    "constant-data-cut": (lambda: put(S, CONSTANT_AT + 32, 0x7F),
                          "failed to read the raw byte data", CONSTANT_AT + 33,
                          ["truncated: the constant 0 ends inside 127 bytes",
                           "failed to parse attribute 'value'", *IN_BODY]),
    "signature-parameters-cut": (lambda: put(S, TYPE_AT + 4 + 4 * 8, b"\x0f\0\0\0"),
                                 "failed to read number of parameters", TYPE_DATA + 15,
                                 [TYPE_CUT.format(7), *SIGNATURE_FAILED]),
    "signature-results-cut": (lambda: put(S, TYPE_AT + 4 + 4 * 8, b"\x13\0\0\0"),
                              "failed to read number of results", TYPE_DATA + 19,
                              [TYPE_CUT.format(7), *SIGNATURE_FAILED]),
    "signature-result": (lambda: put(S, TYPE_DATA + 19, 1), "failed to get result type",
                         TYPE_DATA + 20, [TYPE_CUT.format(7), *SIGNATURE_FAILED]),
    "tile-shape-cut": (lambda: put(S, TYPE_AT + 4 + 4 * 6, b"\x0a\0\0\0"),
                       "failed to read shape", TYPE_DATA + 10,
                       [TYPE_CUT.format(5), "failed to get parameter type", *SIGNATURE_FAILED]),
    "pointee": (lambda: put(S, TYPE_DATA + 4, 0x63), "failed to get pointeeType type",
                TYPE_DATA + 5, ["type id 99 is out of range (the type table has 14 entries)",
                                "failed to get elementType type",
                                "failed to get parameter type", *SIGNATURE_FAILED]),
    "constant-index-cut": (lambda: body_edit(S, lambda b: b[:16]),
                           "failed to read constant index", 51,
                           [BODY_CUT, "failed to parse attribute 'value'", *IN_BODY]),
    "enum-cut": (lambda: body_edit(S, lambda b: b[:22]),
                 "failed to read VarInt for enum attribute.", 57,
                 [BODY_CUT, "failed to parse attribute 'overflow'", *IN_BODY]),
    "operand-cut": (lambda: body_edit(S, lambda b: b[:23]), "failed to read operand index 0",
                    58, [BODY_CUT, *IN_BODY]),
    "operand-count-cut": (lambda: body_edit(S, lambda b: b[:42]),
                          "failed to read operand count", 77, [BODY_CUT, *IN_BODY]),
    "result-count-cut": (lambda: body_edit(S, lambda b: b[:26]),
                         "failed to read number of result types for MakeTensorViewOp", 61,
                         [BODY_CUT, *IN_BODY]),
    "regions-cut": (lambda: body_edit(S, lambda b: b[:47]),
                    "failed to read number of regions to parse.", 82, [BODY_CUT, *IN_BODY]),
    "blocks-cut": (lambda: body_edit(S, lambda b: b[:48]), "failed to read region block count",
                   83, [BODY_CUT, "failed to parse region 0", *IN_BODY]),
    "block-arguments-cut": (lambda: body_edit(S, lambda b: b[:49]),
                            "failed to read block argument count.", 84, [BODY_CUT, *IN_LOOP]),
    "block-ops-cut": (lambda: body_edit(S, lambda b: b[:52]),
                      "failed to read block operation count.", 87, [BODY_CUT, *IN_LOOP]),
    "symbol": (lambda: put(SG, 153, 9), "string index 9 out of bounds", 154,
               ["failed to read string for FlatSymbolRefAttr.", "failed to parse attribute 'name'",
                *IN_BODY]),
    "symbol-empty": (lambda: put(section(SG, STRING, lambda p: set_u32(p, 24, 32)), 153, 5),
                     "empty symbol reference is invalid", 154,
                     ["failed to parse attribute 'name'", *IN_BODY]),
    "producer-cut": (lambda: section(SG, PRODUCER, lambda p: p.__setitem__(0, 0x80)),
                     "failed to read producer string index", File(SG).start(PRODUCER) + 1,
                     ["truncated: the producer section ends inside a varint",
                      "failed to parse producer section"]),
    "array-size": (lambda: body_edit(S, lambda b: b[:110] + varint(1 << 40) + b[111:]),
                   f"array size in bytecode ({1 << 40}) exceeds maximum supported capacity",
                   151, ["failed to read DenseI32ArrayAttr values.",
                         "failed to parse attribute 'permutation'", *IN_BODY]),
    # ---- self-contained attributes, as the hint's value
    "hint-tag-cut": (lambda: hints(b"", cut=True),
                     "failed to read AttributeTag for self-contained attribute.", HINT,
                     [CUT + "varint", *IN_HINT]),
    "hint-int-type": (lambda: hints(b"\x01\x63"),
                      "failed to read valid IntegerType for IntegerAttr", HINT + 2,
                      ["type id 99 is out of range (the type table has 14 entries)", *IN_HINT]),
    "hint-int-not-int": (lambda: hints(b"\x01\x02\x00"),
                         "failed to read valid IntegerType for IntegerAttr", HINT + 2, IN_HINT),
    "hint-int-cut": (lambda: hints(b"\x01\x01", cut=True),
                     "failed to read VarInt for inline integer (width=32)", HINT + 2,
                     [CUT + "varint", *IN_HINT]),
    "hint-int-wide": (lambda: hints(b"\x01\x01" + varint(1 << 33)),
                      f"value {1 << 33} does not fit in 32 bits", HINT + 7, IN_HINT),
    "hint-i1-cut": (lambda: hints(b"\x01\x00", cut=True),
                    "failed to read byte for inline bool (i1)", HINT + 2, [CUT + "byte", *IN_HINT]),
    "hint-float-not-float": (lambda: hints(b"\x02\x01\x00"),
                             "failed to read valid FloatType for FloatAttr", HINT + 2, IN_HINT),
    "hint-float-cut": (lambda: hints(b"\x02\x02", cut=True),
                       "failed to read signed varint for APInt (<= 64 bits).", HINT + 2,
                       [CUT + "varint", *IN_HINT]),
    "hint-float-wide": (lambda: hints(b"\x02\x02" + varint(1 << 34)),
                        f"value {1 << 33} does not fit in 32 bits", HINT + 7, IN_HINT),
    "hint-f8-cut": (lambda: hints(b"\x02\x00", cut=True, f8=0x0A),
                    "failed to read byte for APInt (<= 8 bits).", HINT + 2,
                    [CUT + "byte", *IN_HINT]),
    "hint-f4-wide": (lambda: hints(b"\x02\x00\x10", f8=0x13),
                     "value 16 does not fit in 4 bits.", HINT + 3, IN_HINT),
    "hint-bool-cut": (lambda: hints(b"\x03", cut=True),
                      "failed to read byte for inline bool (i1)", HINT + 1,
                      [CUT + "byte", *IN_HINT]),
    "hint-type": (lambda: hints(b"\x04\x63"), "failed to get referenced type for TypeAttr",
                  HINT + 2,
                  ["type id 99 is out of range (the type table has 14 entries)", *IN_HINT]),
    "hint-string": (lambda: hints(b"\x05\x63"), "string index 99 out of bounds", HINT + 2,
                    ["failed to read StringAttr.", *IN_HINT]),
    "hint-array-cut": (lambda: hints(b"\x06\x80", cut=True),
                       "failed to read size for ArrayAttr.", HINT + 2,
                       [CUT + "varint", *IN_HINT]),
    "hint-array-element": (lambda: hints(b"\x06\x01\x63"),
                           "unsupported AttributeTag 99 for self-contained attribute", HINT + 3,
                           ["failed to parse ArrayAttr element 0", *IN_HINT]),
    "hint-array-untyped": (lambda: hints(b"\x06\x01\x0a\x00"),
                           "ArrayAttr contains non-TypedAttr elements or is null", HINT + 4,
                           IN_HINT),
    "hint-dense-type": (lambda: hints(b"\x07\x02\x00"),
                        "failed to read valid MLIR Type for self-contained DenseElementsAttr",
                        HINT + 2, IN_HINT),
    "hint-dense": (lambda: hints(b"\x07\x05\x00"), "unknown DenseElementsAttr based Attr",
                   HINT + 2, IN_HINT),
    "hint-divby-cut": (lambda: hints(b"\x08\x80", cut=True),
                       "failed to read divisor for DivByAttr", HINT + 2,
                       [CUT + "varint", *IN_HINT]),
    "hint-divby-flags": (lambda: hints(b"\x08\x10", cut=True),
                         "failed to read flags byte for DivByAttr", HINT + 2,
                         [CUT + "byte", *IN_HINT]),
    "hint-divby-every": (lambda: hints(b"\x08\x10\x01", cut=True),
                         "failed to read value for 'every' in DivByAttr", HINT + 3,
                         [CUT + "varint", *IN_HINT]),
    "hint-divby-along": (lambda: hints(b"\x08\x10\x02", cut=True),
                         "failed to read value for 'along' in DivByAttr", HINT + 3,
                         [CUT + "varint", *IN_HINT]),
    "hint-same-cut": (lambda: hints(b"\x09\x80", cut=True),
                      "failed to read DenseI64ArrayAttr values.", HINT + 2,
                      [CUT + "varint", "failed to read DenseI64ArrayAttr for SameElementsAttr",
                       *IN_HINT]),
    "hint-same-value": (lambda: hints(b"\x09\x01" + (2**63 - 1).to_bytes(8, "little")),
                        f"array contains unsupported value {2**63 - 1}", HINT + 10,
                        ["failed to read DenseI64ArrayAttr for SameElementsAttr", *IN_HINT]),
    "hint-dict-cut": (lambda: hints(b"\x0a\x80", cut=True),
                      "failed to read size for DictionaryAttr", HINT + 2,
                      [CUT + "varint", *IN_HINT]),
    "hint-bounded-cut": (lambda: hints(b"\x0c", cut=True),
                         "failed to read flags byte for BoundedAttr", HINT + 1,
                         [CUT + "byte", *IN_HINT]),
    "hint-bounded-lower": (lambda: hints(b"\x0c\x01", cut=True),
                           "failed to read lower bound for BoundedAttr", HINT + 2,
                           [CUT + "varint", *IN_HINT]),
    "hint-bounded-upper": (lambda: hints(b"\x0c\x02", cut=True),
                           "failed to read upper bound for BoundedAttr", HINT + 2,
                           [CUT + "varint", *IN_HINT]),
})


def _filled() -> None:
    """Cases whose expectations depend on the layout of another file."""
    start, end = body(S)
    CASES["opcode-cut"] = (CASES["opcode-cut"][0], "failed to read operation opcode.", end + 1,
                           ["truncated: the body of function 'k' ends inside a varint",
                            BODY_FAILED, CREATE_FAILED])
    # 13.1: the tile<2xf32> of the global with an i4 element (13.3+)
    f32 = S131.index(b"\x07", File(S131).start(TYPE) + 4 + 4 * 14)
    CASES["type-too-new"] = (
        lambda: put(S131, f32, 0x16),
        "type 'Int4' requires bytecode version 13.3+, file version is 13.1", f32 + 1,
        ["failed to get elementType type", "provided type is null",
         "failed to create global from bytecode"])


_filled()


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_tile_message(name):
    build, message, offset, notes = CASES[name]
    assert error(build()) == (message, offset, notes)


# ---- debug info (a kernel with locations)

DEBUG_AT = File(D).start(W.SEC_DEBUG)  # the references at +16, the records at +68
REC = DEBUG_AT + 68
LOC_FAILED = "failed to read function location for 'k'"
DEBUG_FAILED = ["failed to parse debug section"]
DEBUG_CUT = "truncated: the debug section ends inside "
DI_CUT = "truncated: the debug attribute {} ends inside a varint"
NO_DEBUG_9 = "debug attribute 9 is out of range (the debug table has 6 entries)"
IN_SCOPE = "failed to read scope attribute when parsing DILocAttr"
IN_FUNCTION_LOC = [LOC_FAILED, CREATE_FAILED]
IN_OP_LOC = ["failed to read operation location.", BODY_FAILED, CREATE_FAILED]


def debug(payload: bytes) -> bytes:
    """D with this debug section."""
    return section(D, W.SEC_DEBUG, lambda p: p.__setitem__(slice(None), payload))


def record_start(k: int, offset: int) -> bytes:
    """D with debug record ``k`` (0-based) starting at ``offset`` of the records."""
    return section(D, W.SEC_DEBUG, lambda p: set_u32(p, 44 + 4 * k, offset))

DEBUG_CASES: dict[str, tuple[Callable[[], bytes], str, int, list[str]]] = {
    "debug-slot": (lambda: put(D, 20, 2), LOC_FAILED, len(D),
                   ["the function's debug slot is out of range", CREATE_FAILED]),
    "loc-scope": (lambda: put(D, DEBUG_AT + 68 + 13, 1),
                  "failed to read scope attribute when parsing DILocAttr", DEBUG_AT + 82,
                  ["debug attribute 1 is a DIFileAttr", LOC_FAILED, CREATE_FAILED]),
    "op-location": (lambda: put(D, DEBUG_AT + 24, 1), "failed to read operation location.", 23,
                    ["debug attribute 1 is a DIFileAttr, not a location", BODY_FAILED,
                     CREATE_FAILED]),
    "file-name": (lambda: put(D, DEBUG_AT + 68 + 1, 9), "string index 9 out of bounds",
                  DEBUG_AT + 70,
                  ["failed to read file name attribute when parsing DIFileAttr",
                   "failed to read file attribute when parsing DISubprogramAttr",
                   "failed to read scope attribute when parsing DILocAttr", LOC_FAILED,
                   CREATE_FAILED]),
    "loc-file-name": (lambda: put(D, DEBUG_AT + 68 + 14, 9), "string index 9 out of bounds",
                      DEBUG_AT + 83,
                      ["failed to read file name attribute when parsing FileLineColLoc",
                       LOC_FAILED, CREATE_FAILED]),
    "subprogram-line": (lambda: section(D, W.SEC_DEBUG, lambda p: set_u32(p, 56, 7)),
                        "failed to read line number when parsing DISubprogramAttr",
                        DEBUG_AT + 75,
                        ["truncated: the debug attribute 3 ends inside a varint",
                         "failed to read scope attribute when parsing DILocAttr",
                         "failed to read operation location.", BODY_FAILED, CREATE_FAILED]),
    "debug-empty": (lambda: debug(b""),
                    "failed to read total number of operations with debug info", DEBUG_AT,
                    ["truncated: the debug section ends inside a varint",
                     "failed to parse debug section"]),
    "debug-pointer": (lambda: debug(b"\x00\xcb\xcb\xcb"),
                      "failed to read debug info index offset pointer.", DEBUG_AT + 4,
                      ["failed to parse debug section"]),
    "debug-offsets": (lambda: debug(b"\x05\xcb\xcb\xcb\x00\x00\x00\x00"),
                      "failed to skip debug info index offsets", DEBUG_AT + 4,
                      ["truncated: the debug section ends inside 5 integers of 4 bytes",
                       "failed to parse debug section"]),
    "debug-attribute-count": (lambda: debug(b"\x00\xcb\xcb\xcb\x00\xcb\xcb\xcb\x7f\xcb\xcb\xcb"),
                              "number of debug info attributes (127) exceeds the maximum of 0 "
                              "that can fit in the remaining payload of 3 bytes.", DEBUG_AT + 9,
                              ["failed to parse debug section"]),
    "debug-padding": (lambda: debug(b"\x00"),
                      "failed to skip padding for debug info index offset pointer",
                      DEBUG_AT + 1, [DEBUG_CUT + "alignment padding", *DEBUG_FAILED]),
    "debug-indices-count-cut": (lambda: debug(b"\x00\xcb\xcb\xcb\x80"),
                                "failed to read total number of debug info indices",
                                DEBUG_AT + 5, [DEBUG_CUT + "a varint", *DEBUG_FAILED]),
    "debug-indices-padding": (lambda: debug(b"\x00\xcb\xcb\xcb\x00"),
                              "failed to skip padding for debug info indices pointer",
                              DEBUG_AT + 5, [DEBUG_CUT + "alignment padding", *DEBUG_FAILED]),
    "debug-indices-pointer": (lambda: debug(b"\x00\xcb\xcb\xcb\x00\xcb\xcb\xcb"),
                              "failed to read debug info indices pointer", DEBUG_AT + 8,
                              DEBUG_FAILED),
    "debug-indices": (lambda: debug(b"\x00\xcb\xcb\xcb\x02\xcb\xcb\xcb" + bytes(8)),
                      "failed to skip debug info indices", DEBUG_AT + 8,
                      [DEBUG_CUT + "2 integers of 8 bytes", *DEBUG_FAILED]),
    "debug-attributes-count-cut": (lambda: debug(b"\x00\xcb\xcb\xcb\x00\xcb\xcb\xcb\x80"),
                                   "failed to read total number of debug info attributes",
                                   DEBUG_AT + 9, [DEBUG_CUT + "a varint", *DEBUG_FAILED]),
    "debug-attributes-padding": (lambda: debug(b"\x00\xcb\xcb\xcb\x00\xcb\xcb\xcb\x00"),
                                 "failed to skip padding for debug info offset pointer",
                                 DEBUG_AT + 9,
                                 [DEBUG_CUT + "alignment padding", *DEBUG_FAILED]),
    "debug-attributes-pointer": (lambda: debug(b"\x00\xcb\xcb\xcb\x00\xcb\xcb\xcb\x00\xcb\xcb\xcb"),
                                 "failed to read debug info offset pointer", DEBUG_AT + 12,
                                 DEBUG_FAILED),
    "debug-attributes": (lambda: debug(b"\x00\xcb\xcb\xcb\x00\xcb\xcb\xcb\x02\xcb\xcb\xcb"
                                       + bytes(5)),
                         "failed to skip debug info offsets", DEBUG_AT + 12,
                         [DEBUG_CUT + "2 integers of 4 bytes", *DEBUG_FAILED]),
    # the records: 1 DIFile, 2 DICompileUnit, 3 DISubprogram, 4-6 DILoc (at REC + 0, 3, 5,
    # 12, 17, 22); record 5 is the constant's location, record 4 the function's
    "compile-unit-file": (lambda: put(D, REC + 4, 9),
                          "failed to read file attribute when parsing DICompileUnitAttr", REC + 5,
                          [NO_DEBUG_9,
                           "failed to read compile unit attribute when parsing DISubprogramAttr",
                           IN_SCOPE, *IN_FUNCTION_LOC]),
    "file-directory": (lambda: put(D, REC + 2, 9), "string index 9 out of bounds", REC + 3,
                       ["failed to read directory attribute when parsing DIFileAttr",
                        "failed to read file attribute when parsing DISubprogramAttr",
                        IN_SCOPE, *IN_FUNCTION_LOC]),
    "subprogram-name": (lambda: put(D, REC + 8, 9), "string index 9 out of bounds", REC + 9,
                        ["failed to read name attribute when parsing DISubprogramAttr",
                         IN_SCOPE, *IN_FUNCTION_LOC]),
    "subprogram-linkage": (lambda: put(D, REC + 9, 9), "string index 9 out of bounds",
                           REC + 10,
                           ["failed to read linkage name attribute when parsing DISubprogramAttr",
                            IN_SCOPE, *IN_FUNCTION_LOC]),
    "subprogram-unit": (lambda: put(D, REC + 10, 9),
                        "failed to read compile unit attribute when parsing DISubprogramAttr",
                        REC + 11, [NO_DEBUG_9, IN_SCOPE, *IN_FUNCTION_LOC]),
    # (record 4 then starts inside record 3: an unknown tag, read as an unknown location)
    "subprogram-scope-line": (lambda: record_start(3, 11),
                              "failed to read scope line number when parsing DISubprogramAttr",
                              REC + 11, [DI_CUT.format(3), IN_SCOPE, *IN_OP_LOC]),
    "loc-line": (lambda: record_start(5, 20),
                 "failed to read line number when parsing FileLineColLoc", REC + 20,
                 [DI_CUT.format(5), *IN_OP_LOC]),
    "loc-column": (lambda: record_start(5, 21),
                   "failed to read column number when parsing FileLineColLoc", REC + 21,
                   [DI_CUT.format(5), *IN_OP_LOC]),
    "block-scope": (lambda: put(D, REC + 17, b"\x03\x09"),
                    "failed to read scope attribute when parsing DILexicalBlockAttr", REC + 19,
                    [NO_DEBUG_9, *IN_OP_LOC]),
    "block-file": (lambda: put(D, REC + 17, b"\x03\x03\x09"),
                   "failed to read file attribute when parsing DILexicalBlockAttr", REC + 20,
                   [NO_DEBUG_9, *IN_OP_LOC]),
    "block-line": (lambda: put(record_start(5, 20), REC + 17, b"\x03\x03\x01"),
                   "failed to read line number when parsing DILexicalBlockAttr", REC + 20,
                   [DI_CUT.format(5), *IN_OP_LOC]),
    "block-column": (lambda: put(record_start(5, 21), REC + 17, b"\x03\x03\x01\x0a"),
                     "failed to read column number when parsing DILexicalBlockAttr", REC + 21,
                     [DI_CUT.format(5), *IN_OP_LOC]),
    "callee": (lambda: put(D, REC + 17, b"\x06\x09"),
               "failed to read callee attribute when parsing CallSiteLoc", REC + 19,
               [NO_DEBUG_9, *IN_OP_LOC]),
    "caller": (lambda: put(D, REC + 17, b"\x06\x04\x09"),
               "failed to read caller attribute when parsing CallSiteLoc", REC + 20,
               [NO_DEBUG_9, *IN_OP_LOC]),
}


@pytest.mark.parametrize("name", sorted(DEBUG_CASES))
def test_cuda_tile_debug_info_message(name):
    build, message, offset, notes = DEBUG_CASES[name]
    assert error(build()) == (message, offset, notes)


def test_producer_string():
    module = parse_text(DEBUG_KERNEL, "k.mlir")
    module.producer = "nanotile"
    data = section(write_bytecode(module, (13, 3)), PRODUCER, lambda p: p.__setitem__(0, 9))
    assert error(data) == ("string index 9 out of bounds", File(data).start(PRODUCER) + 1,
                           ["failed to get producer string at index 9",
                            "failed to parse producer section"])


# ---- what cuda-tile accepts, nanotile accepts


def test_unchecked_padding_and_unknown_debug_tags_read():
    data = put(S, 14 + 3, 0x00)  # a padding byte of the function section
    read_bytecode(data, "x")
    # an unknown debug-info tag reads as an unknown location: the op has none
    module = read_bytecode(put(D, DEBUG_AT + 68 + 17, 0x63), "x")
    assert module.entries()[0].regions[0].blocks[0].ops[0].location is None


def test_producer_section_in_a_13_1_file_is_read():
    module = parse_text(DEBUG_KERNEL, "k.mlir")
    module.producer = "nanotile"
    f = File(write_bytecode(module, (13, 3)))
    f.header = f.header[:9] + b"\x01" + f.header[10:]  # now a 13.1 file
    assert read_bytecode(f.bytes(), "x").producer == "nanotile"


# ---- nanotile's own checks: reported when cuda-tile's reader finds nothing first


def test_invalid_utf8_string():
    data = put(S, STRING_AT + 4 + 20 + 30, 0xFF)  # the global's name "g"
    assert error(data) == ("string 4 is not valid UTF-8", END, [])


def test_a_region_holds_one_block():
    def two_blocks(b: bytes) -> bytes:
        # the else region of the if gets a second block: a copy of its first
        at = 122 - 35
        block = b[at + 1:at + 7]
        return b[:at] + b"\x02" + block + block + b[at + 7:]
    no_locations = put(S, FUNC_AT + 4, 0)  # (the file has as many as it has ops)
    message, offset, notes = error(body_edit(no_locations, two_blocks))
    assert (message, notes) == ("a region holds at most one block, not 2", [])


def test_a_later_cuda_tile_error_comes_first():
    """The UTF-8 check fails first, but cuda-tile's reader reports a later error."""
    data = in_body(58, 0x63, put(S, STRING_AT + 4 + 20 + 30, 0xFF))
    assert error(data)[0] == "operand index 99 out of bounds (size=8) for operand 0"


NON_ENTRY = write_bytecode(parse_text("cuda_tile.module @m {\n  testing$func @k() {\n"
                                      "    return\n  }\n}\n", "k.mlir"), (13, 3))


def test_a_non_entry_function_reads_back_as_testing_func():
    """The one input cuda-tile refuses and nanotile reads: a function without the entry
    flag (createFunction: "un-expected non-entry function 'k'", at the end of the file,
    then "failed to create function from bytecode"; tileirdisasm and tileiras say so, as
    the test below checks). nanotile's writer emits one for the test-only op, so its
    reader takes it back."""
    assert [item.name for item in read_bytecode(NON_ENTRY, "x").items] == ["testing$func"]
    assert cuda_tile_chain(NON_ENTRY) is None


# ---- the same as NVIDIA's tool


TILEIRDISASM = nvidia_tool("tileirdisasm")
needs_tool = pytest.mark.skipif(TILEIRDISASM is None, reason="tileirdisasm not installed")
# Cases where tileirdisasm (13.4) reports otherwise than cuda-tile 13.3's reader.
DIFFERS_IN_13_4 = {
    "hints-value": "13.4 does not add 'failed to parse OptimizationHintsAttr'",
    "debug-offsets": "13.4 checks the count against the payload first",
    "debug-indices": "13.4 checks the count against the payload first",
    "global-type": "13.4 creates globals before it reads the function section",
    "global-value": "13.4 creates globals before it reads the function section",
    "hint-array-untyped": "13.4 does not check that an array's elements are typed",
    "hint-same-value": "13.4 reads same_elements with a generated reader",
    "hint-same-cut": "13.4 reads same_elements with a generated reader",
    **{f"hint-{name}": "13.4 reads div_by and bounded with generated readers"
       for name in ("divby-cut", "divby-flags", "divby-every", "divby-along", "bounded-cut",
                    "bounded-lower", "bounded-upper")},
}
_LINE = re.compile(r"^error: (?:error at offset (\d+): )?(.*)$")


def _tileirdisasm(data: bytes, tmp_path) -> list[tuple[str, int | None]] | None:
    path = tmp_path / "in.tileirbc"
    path.write_bytes(data)
    proc = subprocess.run([str(TILEIRDISASM), str(path)], capture_output=True, text=True,
                          errors="replace", timeout=60)
    if proc.returncode == 0:
        return None
    out = []
    for line in proc.stderr.splitlines():
        m = _LINE.match(line)
        if m and m.group(2) != "failed to read provided Tile IR bytecode":
            out.append((m.group(2), None if m.group(1) is None else int(m.group(1))))
    return out


def _ours(data: bytes) -> list[tuple[str, int | None]] | None:
    chain = cuda_tile_chain(data)
    return None if chain is None else [(m, o) for m, o, kind in chain if kind == W.CUDA]


@needs_tool
@pytest.mark.parametrize("name", sorted(set(CASES) | set(DEBUG_CASES)))
def test_cases_as_tileirdisasm_reports_them(name, tmp_path):
    if name in DIFFERS_IN_13_4 or name in ("magic", "version", "section-past-padding"):
        pytest.skip(DIFFERS_IN_13_4.get(name, "tileirdisasm checks the header first"))
    data = (CASES.get(name) or DEBUG_CASES[name])[0]()
    assert _ours(data) == _tileirdisasm(data, tmp_path)


@needs_tool
@pytest.mark.parametrize("data", [S, S131, D], ids=["13.3", "13.1", "debug-info"])
def test_every_truncation_as_tileirdisasm_reports_it(data, tmp_path):
    for n in range(12, len(data)):
        assert _ours(data[:n]) == _tileirdisasm(data[:n], tmp_path), n


@pytest.mark.parametrize("tool", ["tileirdisasm", "tileiras"])
def test_nvidia_refuses_a_non_entry_function(tool, tmp_path):
    """What nanotile reads and NVIDIA's tools refuse (see
    test_a_non_entry_function_reads_back_as_testing_func)."""
    path = nvidia_tool(tool)
    if path is None:
        pytest.skip(f"{tool} not installed")
    (tmp_path / "in.tileirbc").write_bytes(NON_ENTRY)
    extra = ["--gpu-name=sm_90", "-o", str(tmp_path / "k.cubin")] if tool == "tileiras" else []
    proc = subprocess.run([str(path), str(tmp_path / "in.tileirbc"), *extra],
                          capture_output=True, text=True, errors="replace", timeout=60)
    assert proc.returncode != 0
    assert proc.stderr.splitlines()[:2] == [
        f"error: error at offset {len(NON_ENTRY)}: un-expected non-entry function 'k'",
        f"error: error at offset {len(NON_ENTRY)}: failed to create function from bytecode"]
