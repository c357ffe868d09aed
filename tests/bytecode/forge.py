"""Bad bytecode for the reader's error tests: small valid files written by nanotile's
writer from inline kernels, taken apart into sections and put back together with a part
changed (so that the framing around the change stays valid)."""

from __future__ import annotations

from nanotile.bytecode import reader as R
from nanotile.bytecode import wire as W
from nanotile.bytecode.writer import write_bytecode
from nanotile.diagnostics import CompileError
from nanotile.ir.parser import parse_text

# A global, an entry with hints, assumptions, a tensor view and its partition view, a
# loop holding a load and an if/else, a store: a tour of the tables and the op stream.
KERNEL = """
cuda_tile.module @m {
global @g <f32: [1.0, 2.0]> : tile<2xf32>
entry @k(%a: tile<ptr<f32>>, %n: tile<i32>, %x: tile<f32>) optimization_hints=<sm_100 = {num_cta_in_cga = 2, occupancy = 2}> {
  %t = make_token : token
  %p = assume div_by<16>, %a : tile<ptr<f32>>
  %m = assume bounded<0, ?>, %n : tile<i32>
  %one = constant <i32: 1> : tile<i32>
  %zero = constant <i32: 0> : tile<i32>
  %s = addi %m, %one overflow<nsw> : tile<i32>
  %tv = make_tensor_view %p, shape = [%s], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %pv = make_partition_view %tv : partition_view<tile=(128), padding_value = zero, tensor_view<?xf32, strides=[1]>>
  %acc0 = constant <f32: 0.000000e+00> : tile<128xf32>
  %r = for %i in (%zero to %n, step %one) : tile<i32> iter_values(%acc = %acc0) -> (tile<128xf32>) {
    %tile, %tok = load_view_tko weak %pv[%i] token = %t : partition_view<tile=(128), padding_value = zero, tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<128xf32>, token
    %c = cmpi less_than %i, %one, signed : tile<i32> -> tile<i1>
    %v = if %c -> (tile<128xf32>) {
      %u = addf %acc, %tile : tile<128xf32>
      yield %u : tile<128xf32>
    } else {
      yield %acc : tile<128xf32>
    }
    continue %v : tile<128xf32>
  }
  %w = store_view_tko weak %r, %pv[%zero] token = %t : tile<128xf32>, partition_view<tile=(128), padding_value = zero, tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
  %q = permute %acc0 [0] : tile<128xf32> -> tile<128xf32>
  return
}
}
"""

# One op with a debug location.
DEBUG_KERNEL = """
cuda_tile.module @kernels {
  entry @k() {
    %c = constant <i32: 42> : tile<i32> loc(#loc5)
    return loc(#loc6)
  } loc(#loc4)
} loc(#loc)
#di_file = #cuda_tile.di_file<"k.py" in "dir">
#loc = loc(unknown)
#loc1 = loc("k.py":8:3)
#loc2 = loc("k.py":10:10)
#loc3 = loc("k.py":12:5)
#di_compile_unit = #cuda_tile.di_compile_unit<file = #di_file>
#di_subprogram = #cuda_tile.di_subprogram<file = #di_file, line = 8, name = "k", linkageName = "k", compileUnit = #di_compile_unit, scopeLine = 8>
#loc4 = #cuda_tile.di_loc<#loc1 in #di_subprogram>
#loc5 = #cuda_tile.di_loc<#loc2 in #di_subprogram>
#loc6 = #cuda_tile.di_loc<#loc3 in #di_subprogram>
"""

STRING, FUNC, DEBUG, CONSTANT, TYPE, GLOBAL, PRODUCER = (
    W.SEC_STRING, W.SEC_FUNC, W.SEC_DEBUG, W.SEC_CONSTANT, W.SEC_TYPE, W.SEC_GLOBAL,
    W.SEC_PRODUCER)


def sample(version: tuple[int, int] = (13, 3), kernel: str = KERNEL,
           producer: str | None = None) -> bytes:
    module = parse_text(kernel, "k.mlir")
    module.producer = producer
    return write_bytecode(module, version)


def varint(x: int) -> bytes:
    buf = bytearray()
    W.put_varint(buf, x)
    return bytes(buf)


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """(value, position after it)."""
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


class File:
    """A bytecode file as header + sections [id, alignment or None, payload]."""

    def __init__(self, data: bytes) -> None:
        self.header = data[:12]
        self.sections: list[list] = []
        pos = 12
        while data[pos] & 0x7F:
            ident = data[pos]
            length, pos = read_varint(data, pos + 1)
            alignment = None
            if ident & 0x80:
                alignment, pos = read_varint(data, pos)
                pos += -pos % alignment
            self.sections.append([ident & 0x7F, alignment, bytearray(data[pos:pos + length])])
            pos += length

    def payload(self, sid: int) -> bytearray:
        return next(s[2] for s in self.sections if s[0] == sid)

    def bytes(self) -> bytes:
        out = bytearray(self.header)
        for sid, alignment, payload in self.sections:
            out.append(sid | (0x80 if alignment else 0))
            out += varint(len(payload))
            if alignment:
                out += varint(alignment)
                out += bytes([W.PAD]) * (-len(out) % alignment)
            out += payload
        return bytes(out) + b"\x00"

    def start(self, sid: int) -> int:
        """The file offset of section ``sid``'s payload."""
        pos = 12
        for s, alignment, payload in self.sections:
            pos += 1 + len(varint(len(payload)))
            if alignment:
                pos += len(varint(alignment))
                pos += -pos % alignment
            if s == sid:
                return pos
            pos += len(payload)
        raise KeyError(sid)


def body(data: bytes) -> tuple[int, int]:
    """(start, end) in the file of the first function's body."""
    r = R._Reader(data, "x")
    main = W.Cursor(data, 0, len(data), "file")
    r.read_header(main)
    sections = r.read_sections(main)
    r.read_strings(sections[STRING])
    r.read_type_section(sections[TYPE])
    f = r.read_function_section(sections[FUNC])[0]
    return f.body.pos, f.body.end


def with_body(data: bytes, new_body: bytes) -> bytes:
    """``data`` with the first (only) function's body replaced."""
    start, end = body(data)
    f = File(data)
    func_start = f.start(FUNC)
    payload = f.payload(FUNC)
    length_at = start - func_start - len(varint(end - start))
    assert read_varint(payload, length_at) == (end - start, start - func_start)
    payload[length_at:] = varint(len(new_body)) + new_body
    return f.bytes()


def error(data: bytes) -> tuple[str, int | None, list[str]]:
    """(message, offset, the notes' messages) of reading ``data``."""
    try:
        R.read_bytecode(data, "bad.tileirbc")
    except CompileError as e:
        diag = e.diagnostics[0]
        assert diag.filename == "bad.tileirbc"
        return diag.message, diag.offset, [n.message for n in diag.notes]
    raise AssertionError("read without an error")
