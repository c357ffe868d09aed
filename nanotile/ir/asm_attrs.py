"""Numbers, constants, strings, types and attributes as text: the spellings the reader
(text_values.py, text_reader.py) decodes and the printer writes.

Literals become element bits (``parse_float_literal``, ``parse_int_literal``) and a
constant's values its bytecode bytes (``make_dense``). Printing follows MLIR: floats as ``1.000000e+00`` when that spelling reads back to the
same bits, else APFloat's shortest-ish form (``9.99999974E-6``), else hex bits
(NaN, infinities). Strings escape non-printable bytes as ``\\XX``.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

from . import attrs as A
from . import types as T


class AsmError(Exception):
    """An error in the text of a literal, constant or string; ``offset`` is relative to it."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


# ---------------------------------------------------------------------------------------
# Element bits <-> Python numbers


def _ml_dtype(elem: T.ElementType) -> Any:
    import ml_dtypes  # only for the exotic narrow float formats

    names = {"f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
             "f8E8M0FNU": "float8_e8m0fnu", "f4E2M1FN": "float4_e2m1fn",
             "f8E5M3FNU": "float8_e5m3fnu"}
    name = names.get(elem.name)
    if name is None or not hasattr(ml_dtypes, name):
        raise AsmError(f"float type {elem.name} is not supported in constants")
    return getattr(ml_dtypes, name)


def _e5m3fnu_value(b: int) -> float:
    """f8E5M3FNU: unsigned, 5 exponent bits (bias 15), 3 mantissa bits, 0xFF = NaN."""
    if b == 0xFF:
        return math.nan
    e, m = (b >> 3) & 31, b & 7
    return (m / 8) * 2.0 ** -14 if e == 0 else (1 + m / 8) * 2.0 ** (e - 15)


def _e5m3fnu_bits(value: float) -> int:
    if math.isnan(value) or value < 0:
        return 0xFF
    best = min(range(255), key=lambda b: (abs(_e5m3fnu_value(b) - value), b & 1))
    return best


def float_to_bits(value: float, elem: T.ElementType) -> int:
    """The bit pattern of ``value`` rounded to the float format ``elem``."""
    name = elem.name
    if name == "f64":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if name == "tf32":  # 19 bits: f32's top bits, mantissa rounded to 10 bits (even)
        b32 = float_to_bits(value, T.F32)
        if math.isnan(value) or math.isinf(value):
            return b32 >> 13
        return ((b32 + 0xFFF + ((b32 >> 13) & 1)) >> 13) & 0x7FFFF
    if name == "f32":
        try:
            return struct.unpack("<I", struct.pack("<f", value))[0]
        except OverflowError:  # beyond the largest finite value: round to max or inf
            big = abs(value) >= 2.0 ** 128 - 2.0 ** 103
            return (0x80000000 if value < 0 else 0) | (0x7F800000 if big else 0x7F7FFFFF)
    if name == "f16":
        try:
            return struct.unpack("<H", struct.pack("<e", value))[0]
        except OverflowError:
            big = abs(value) >= 65520.0
            return (0x8000 if value < 0 else 0) | (0x7C00 if big else 0x7BFF)
    if name == "bf16":
        if math.isinf(value) or abs(value) > 3.4e38:
            return 0xFF80 if value < 0 else 0x7F80
        b32 = struct.unpack("<I", struct.pack("<f", value))[0]
        if math.isnan(value):
            return (b32 >> 16) | 0x40
        return (b32 + 0x7FFF + ((b32 >> 16) & 1)) >> 16  # round to nearest even
    if name == "f8E5M3FNU":
        return _e5m3fnu_bits(value)
    import numpy as np

    arr = np.array([value], dtype=np.float64).astype(_ml_dtype(elem))
    return int(arr.view(np.uint8)[0])


def bits_to_float(bits: int, elem: T.ElementType) -> float:
    name = elem.name
    if name == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if name == "f32":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if name == "tf32":
        return struct.unpack("<f", struct.pack("<I", bits << 13))[0]
    if name == "f16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if name == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if name == "f8E5M3FNU":
        return _e5m3fnu_value(bits)
    import numpy as np

    return float(np.array([bits], dtype=np.uint8).view(_ml_dtype(elem))[0])


# APFloat's "natural" number of digits for a format: 2 + precision * 59 / 196.
_PRECISION_BITS = {"f64": 53, "f32": 24, "tf32": 11, "f16": 11, "bf16": 8, "f8E4M3FN": 4,
                   "f8E5M2": 3, "f8E8M0FNU": 1, "f4E2M1FN": 2, "f8E5M3FNU": 4}


def apfloat_string(value: float, precision: int, max_padding: int, truncate_zero: bool) -> str:
    """LLVM APFloat::toString for a finite value (same digit selection and layout)."""
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        if truncate_zero:
            return sign + "0.0E+0"
        return sign + "0." + "0" * precision + "e+00"
    num, den = abs(value).as_integer_ratio()
    exp = 0
    while num % 2 == 0 and num:
        num //= 2
        exp += 1
    exp -= den.bit_length() - 1
    if exp >= 0:
        sig, exp = num << exp, 0
    else:
        sig = num * 5 ** (-exp)
    # Drop whole decimal digits we certainly do not need (truncating, as APFloat does).
    required = (precision * 196 + 58) // 59
    if sig.bit_length() > required:
        removable = (sig.bit_length() - required) * 59 // 196
        if removable:
            exp += removable
            sig //= 10 ** removable
    digits = str(sig)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    # Round half up to `precision` digits.
    if len(digits) > precision:
        drop = len(digits) - precision
        keep = digits[:precision]
        if digits[precision] >= "5":
            keep = str(int(keep) + 1)
            if len(keep) > precision:
                keep = keep[:precision]
                drop += 1
        stripped = keep.rstrip("0")
        exp += drop + len(keep) - len(stripped)
        digits = stripped
    n = len(digits)
    if max_padding == 0:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or n + exp > precision
    else:
        msd = exp + n - 1
        scientific = msd < 0 and -msd > max_padding
    if scientific:
        e10 = exp + n - 1
        frac = digits[1:]
        if n == 1 and truncate_zero:
            frac = "0"
        if not truncate_zero and precision > n - 1:
            frac += "0" * (precision - n + 1)
        etext = str(abs(e10))
        if not truncate_zero and len(etext) < 2:
            etext = "0" + etext
        return (f"{sign}{digits[0]}.{frac}{'E' if truncate_zero else 'e'}"
                f"{'+' if e10 >= 0 else '-'}{etext}")
    if exp >= 0:
        return sign + digits + "0" * exp
    whole = exp + n
    if whole > 0:
        return f"{sign}{digits[:whole]}.{digits[whole:]}"
    return f"{sign}0.{'0' * -whole}{digits}"


def format_float(bits: int, elem: T.ElementType) -> str:
    """MLIR's spelling of a float attribute value."""
    value = bits_to_float(bits, elem)
    if math.isfinite(value):
        text = apfloat_string(value, 6, 0, False)
        if float_to_bits(float(text), elem) == bits:
            return text
        natural = 2 + _PRECISION_BITS.get(elem.name, 24) * 59 // 196
        text = apfloat_string(value, natural, 3, True)
        if "." in text:
            return text
    width = max(1, (value_bits(elem) + 3) // 4)
    return f"0x{bits:0{width}X}"


def parse_float_literal(text: str, elem: T.ElementType) -> int:
    """Bits of a float literal (decimal, or ``0x...`` = the raw bit pattern)."""
    t = text.lstrip("+")
    if t.startswith(("0x", "-0x")):
        if t.startswith("-"):
            raise AsmError("hexadecimal float literal should not have a leading minus")
        bits = int(t, 16)
        if bits >> value_bits(elem):
            raise AsmError("hexadecimal float constant out of range for type")
        return bits
    if t in ("true", "false"):
        raise AsmError(f"expected a floating point value for {elem}, got '{t}'")
    try:
        return float_to_bits(float(t), elem)
    except ValueError:  # a word other than inf and nan
        raise AsmError("expected floating point literal") from None


def int_fits(value: int, width: int) -> bool:
    """An integer literal fits if it is a valid signed or unsigned ``width``-bit value."""
    return -(1 << (width - 1)) <= value < (1 << width) if width > 1 else value in (0, 1, -1)


def parse_int_literal(text: str, elem: T.ElementType) -> int:
    """The unsigned bit pattern of an integer literal of type ``elem``."""
    if text in ("true", "false"):
        if elem.bitwidth != 1:
            raise AsmError("expected integer value")
        v = int(text == "true")
    else:
        try:
            v = int(text, 0) if text.lstrip("+-").startswith("0x") else int(text)
        except ValueError:
            raise AsmError(f"expected an integer value for {elem}, got '{text}'") from None
    if not int_fits(v, elem.bitwidth):
        raise AsmError(f"integer constant out of range for type {elem}")
    return v & ((1 << elem.bitwidth) - 1)


def signed(bits: int, width: int) -> int:
    return bits - (1 << width) if width > 1 and bits >> (width - 1) else bits


# ---------------------------------------------------------------------------------------
# Dense element data


def value_bits(elem: T.ElementType) -> int:
    """Significant bits of an element (tf32 is a 19-bit format)."""
    return 19 if elem.name == "tf32" else elem.bitwidth


def _elem_nbytes(elem: T.Type) -> int:
    if isinstance(elem, T.PointerType):
        return 8
    assert isinstance(elem, T.ElementType)
    return max(1, (value_bits(elem) + 7) // 8)


def pack_elements(bits: list[int], elem: T.Type) -> bytes:
    """The bytecode's constant layout (what DenseElementsAttr.data holds): little-endian
    elements of whole bytes (i4/f4: one byte each; tf32: 3 bytes), except i1: a splat is
    one byte 0x00/0xFF, other i1 constants are bits, least significant first."""
    if isinstance(elem, T.ElementType) and elem.bitwidth == 1:
        if len(bits) == 1:
            return b"\xff" if bits[0] else b"\x00"
        out = bytearray((len(bits) + 7) // 8)
        for i, b in enumerate(bits):
            out[i // 8] |= (b & 1) << (i % 8)
        return bytes(out)
    n = _elem_nbytes(elem)
    return b"".join(b.to_bytes(n, "little") for b in bits)


def unpack_elements(data: bytes, elem: T.Type, count: int) -> list[int]:
    if isinstance(elem, T.ElementType) and elem.bitwidth == 1:
        if len(data) == 1 and count == 1:
            return [1 if data[0] else 0]
        return [(data[i // 8] >> (i % 8)) & 1 for i in range(count)]
    n = _elem_nbytes(elem)
    mask = (1 << value_bits(elem)) - 1 if isinstance(elem, T.ElementType) else -1
    return [int.from_bytes(data[i * n:(i + 1) * n], "little") & mask for i in range(count)]


def make_dense(values: Any, elem_name: str, tile: T.Type) -> A.DenseElementsAttr:
    """Build a DenseElementsAttr from a parsed value (a literal string or nested lists)."""
    if not isinstance(tile, T.TileType):
        raise AsmError(f"expected a tile type for the constant, got {tile}")
    elem = tile.element
    if str(elem) != ELEMENT_ALIASES.get(elem_name, elem_name):
        raise AsmError(f"constant element type {elem_name} does not match the tile "
                       f"element type {elem}")
    assert isinstance(elem, T.ElementType)
    conv = parse_float_literal if elem.is_float else parse_int_literal
    if not isinstance(values, list):
        bits = [conv(values, elem)]
    else:
        flat: list[str] = []
        _flatten(values, tile.shape, 0, flat)
        bits = [conv(v, elem) for v in flat]
    if len(bits) > 1 and all(b == bits[0] for b in bits):
        bits = bits[:1]
    return A.DenseElementsAttr(tile, pack_elements(bits, elem), len(bits) == 1)


def _flatten(values: Any, shape: tuple[int, ...], depth: int, out: list[str]) -> None:
    if depth == len(shape):
        if isinstance(values, list):
            raise AsmError("constant has more nesting levels than its tile has dimensions")
        out.append(values)
        return
    if not isinstance(values, list) or len(values) != shape[depth]:
        got = len(values) if isinstance(values, list) else "a scalar"
        raise AsmError(f"constant shape does not match the tile shape: expected "
                       f"{shape[depth]} elements in dimension {depth}, got {got}")
    for v in values:
        _flatten(v, shape, depth + 1, out)


def format_element(bits: int, elem: T.Type) -> str:
    assert isinstance(elem, T.ElementType)
    if elem.is_float:
        return format_float(bits, elem)
    if elem.bitwidth == 1:
        return "true" if bits else "false"
    return str(signed(bits, elem.bitwidth))


def dense_values_text(d: A.DenseElementsAttr) -> str:
    """``1.000000e+00`` for a splat, ``[[1, 2], [3, 4]]`` otherwise."""
    elem = d.type.element
    if d.splat:
        return format_element(unpack_elements(d.data, elem, 1)[0], elem)
    items = [format_element(b, elem) for b in unpack_elements(d.data, elem, d.type.num_elements)]
    return _nest(items, d.type.shape)


def _nest(items: list[str], shape: tuple[int, ...]) -> str:
    if len(shape) <= 1:
        return "[" + ", ".join(items) + "]" if shape else items[0]
    step = len(items) // shape[0]
    return "[" + ", ".join(_nest(items[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


# ---------------------------------------------------------------------------------------
# Types


def strip_prefix(text: str) -> str:
    for p in ("!cuda_tile.", "cuda_tile.", "#cuda_tile."):
        if text.startswith(p):
            return text[len(p):]
    return text


# tileirdisasm 13.4 spells f8E5M3FNU as fnv8E5M3FNU; accept both.
ELEMENT_ALIASES = {"fnv8E5M3FNU": "f8E5M3FNU"}
# Element types whose text spelling differs from their name in nanotile.ir.types.
TEXT_SPELLING = {v: k for k, v in ELEMENT_ALIASES.items()}


def spell(text: str) -> str:
    """Apply TEXT_SPELLING to a printed type (``f8E5M3FNU`` is written ``fnv8E5M3FNU``)."""
    for name, spelling in TEXT_SPELLING.items():
        if name in text and spelling not in text:
            text = text.replace(name, spelling)
    return text


def type_text(t: T.Type, generic: bool = False) -> str:
    s = spell(str(t))
    if generic and not isinstance(t, (T.ElementType, T.FunctionType, T.OpaqueType)):
        return "!cuda_tile." + s
    return s


# ---------------------------------------------------------------------------------------
# Strings


def parse_string_literal(text: str) -> str:
    """Decode a quoted MLIR string: ``\\n``, ``\\t``, ``\\\\``, ``\\"`` and ``\\XX`` hex."""
    body = text[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in ('"', "\\"):
            out += nxt.encode()
            i += 2
        elif nxt == "n":
            out += b"\n"
            i += 2
        elif nxt == "t":
            out += b"\t"
            i += 2
        else:
            hx = body[i + 1:i + 3]
            try:
                out.append(int(hx, 16))
            except ValueError:
                raise AsmError(f"unknown escape in string literal: '\\{hx}'", i + 1) from None
            i += 3
    return out.decode("utf-8", errors="surrogateescape")


_BARE_ID = re.compile(r"[A-Za-z_][\w$.]*\Z", re.ASCII)


def name_text(name: str) -> str:
    """A symbol name, dictionary key or hint key as MLIR writes it: as is when it is a
    bare identifier (letter or `_`, then letters, digits, `_$.`), else quoted."""
    return name if _BARE_ID.match(name) else string_text(name)


def symbol_text(name: str) -> str:
    """``@name`` or ``@"name with spaces"``."""
    return "@" + name_text(name)


def string_text(s: str) -> str:
    """Quote a string the way MLIR prints it."""
    out = ['"']
    for b in s.encode("utf-8", errors="surrogateescape"):
        c = chr(b)
        if c == "\\":
            out.append("\\\\")
        elif 0x20 <= b < 0x7F and c != '"':
            out.append(c)
        else:
            out.append(f"\\{b:02X}")
    out.append('"')
    return "".join(out)


# ---------------------------------------------------------------------------------------
# Attribute values printed in the custom form


def hints_text(h: A.OptimizationHintsAttr) -> str:
    # MLIR keeps dictionary attributes sorted by key, so targets and their hints print
    # in name order whatever order they were written or encoded in.
    targets = sorted(h.targets, key=lambda t: t[0])
    return "<" + ", ".join(
        f"{name_text(k)} = "
        f"{dict_text(A.DictAttr(tuple(sorted(d.entries, key=lambda e: e[0]))))}"
        for k, d in targets) + ">"


def _value_text(v: Any) -> str:
    if isinstance(v, A.IntegerAttr):  # hints from bytecode keep their integer type
        v = bool(v.value) if v.type == T.I1 else v.value
    elif isinstance(v, A.BoolAttr | A.StringAttr):
        v = v.value
    elif isinstance(v, A.FloatAttr):
        return typed_attr_text(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, A.DictAttr):
        return dict_text(v)
    if isinstance(v, str):
        return string_text(v)
    return str(v)


def dict_text(d: A.DictAttr) -> str:
    if not d.entries:
        return "{}"
    return "{" + ", ".join(f"{name_text(k)} = {_value_text(v)}" for k, v in d.entries) + "}"


def predicate_text(p: Any) -> str:
    if isinstance(p, A.DivByAttr):
        if p.every is not None:
            return f"div_by<{p.divisor}, every {p.every} along {p.along}>"
        return f"div_by<{p.divisor}>"
    if isinstance(p, A.BoundedAttr):
        lo = "?" if p.lower is None else str(p.lower)
        hi = "?" if p.upper is None else str(p.upper)
        return f"bounded<{lo}, {hi}>"
    if isinstance(p, A.SameElementsAttr):
        return f"same_elements<[{', '.join(map(str, p.values))}]>"
    if isinstance(p, A.OpaqueAttr):
        return p.text
    raise TypeError(f"not an assume predicate: {p!r}")


def typed_attr_text(a: Any) -> str:
    """``0.000000e+00 : f32`` / ``127 : i8`` (the elements of ``identities``)."""
    if isinstance(a, A.FloatAttr):
        return f"{format_float(a.bits, a.type)} : {spell(str(a.type))}"
    if isinstance(a, A.IntegerAttr):
        t = a.type
        if isinstance(t, T.ElementType) and t.bitwidth == 1:
            return "true" if a.value else "false"
        if t == T.I64:  # MLIR's default integer type is left out
            return str(a.value)
        return f"{a.value} : {t}"
    if isinstance(a, A.BoolAttr):
        return "true" if a.value else "false"
    if isinstance(a, A.OpaqueAttr):
        return a.text
    raise TypeError(f"cannot print attribute {a!r}")
