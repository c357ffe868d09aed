"""``vprintf``: format a device printf call from its format string and argument buffer.

The text goes to standard output, or to the stream given to ``printf_output(stream)``
(a context manager; ``nanotile.run(..., device="emulator", out=...)`` uses it so that
emulated print_tko output can be compared with the interpreter's). Each vprintf call is
one ``write``.
"""

from __future__ import annotations

import re
import struct
import sys
from typing import TextIO

_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+))?(hh|h|ll|l|z|j|t)?([diouxXeEfFgGaAcsp%])")
_OUT: list[TextIO | None] = [None]


def output() -> TextIO:
    """Where vprintf writes now."""
    return _OUT[0] if _OUT[0] is not None else sys.stdout


class printf_output:
    """``with printf_output(stream):`` vprintf writes to ``stream``."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        self._was = _OUT[0]
        _OUT[0] = self.stream

    def __exit__(self, *exc) -> None:
        _OUT[0] = self._was


def _read_cstring(w, addr: int) -> str:
    from nanotile.ptxemu.ops_async import read_generic_bytes
    out = bytearray()
    while True:
        b = read_generic_bytes(w, addr + len(out), 1)
        if b == b"\0":
            return out.decode("utf-8", "replace")
        out += b
        if len(out) > 65536:
            return out.decode("utf-8", "replace")


def format_printf(w, fmt_addr: int, buf_addr: int, lane: int) -> str:
    """The text one lane prints. Arguments are packed in the buffer, each aligned to its
    size (ints 4 or 8 bytes, floats promoted to double, pointers and strings 8 bytes)."""
    from nanotile.ptxemu.ops_async import read_generic_bytes
    fmt = _read_cstring(w, fmt_addr)
    pos = 0

    def take(size: int) -> bytes:
        nonlocal pos
        pos = (pos + size - 1) // size * size
        if buf_addr == 0:
            raise ValueError("printf argument buffer is null")
        addr = buf_addr + pos
        if addr >= 0x7D00_0000_0000 and addr < 0x7E00_0000_0000:
            data = w.local.buf[lane, addr - 0x7D00_0000_0000:addr - 0x7D00_0000_0000 + size]
            data = data.tobytes()
        else:
            data = read_generic_bytes(w, addr, size)
        pos += size
        return data

    def repl(m: re.Match) -> str:
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            return "%"
        spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec else "")
        if conv in "eEfFgG":
            return (spec + conv) % struct.unpack("<d", take(8))[0]
        if conv in "aA":
            from nanotile.interp.ops_shape import c_hex_float
            return c_hex_float(struct.unpack("<d", take(8))[0], spec[1:], upper=conv == "A")
        if conv == "s":
            return (spec + "s") % _read_cstring(w, struct.unpack("<Q", take(8))[0])
        if conv == "p":
            return hex(struct.unpack("<Q", take(8))[0])
        size = 8 if length in ("l", "ll", "z", "j", "t") else 4
        raw = take(size)
        v = int.from_bytes(raw, "little", signed=conv in "di")
        if conv == "c":
            return chr(v & 0xFF)
        if conv in "ouxX" and v < 0:
            v &= (1 << (8 * size)) - 1
        return (spec + {"i": "d", "u": "d"}.get(conv, conv)) % v

    return _SPEC.sub(repl, fmt)
