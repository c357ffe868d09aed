"""What every instruction family of the emulator shares: ``C``, the compile-time view of one
instruction (modifiers, types, and operand getters and setters, with ``%clock`` and module
symbols read as operands), the modifier and state-space tables it uses, and
``handler_registry``, the ``@op`` decorator each family module registers its handlers
with. Every family module imports from here; this module imports none of them."""

from __future__ import annotations

import struct

import numpy as np

from nanotile.ptxemu.errors import PtxError
from nanotile.ptxemu.fpmath import DTYPES, FLOATS, SINT, UINT, type_size
from nanotile.ptxemu.machine import CompiledKernel
from nanotile.ptxemu.memory import CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW
from nanotile.ptxemu.ptx_parser import Addr, FImm, Imm, Instruction, NotPred, Reg, Vec


TYPE_NAMES = set(DTYPES)
SPACE_NAMES = {"global": "global", "shared": "shared", "shared::cta": "shared",
               "shared::cluster": "shared", "local": "local", "param": "param",
               "param::entry": "param", "param::func": "local", "const": "const"}
WINDOWS = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "param": PARAM_WINDOW,
           "const": CONST_WINDOW, "global": 0}
ROUNDING = {"rn", "rz", "rm", "rp"}
INT_ROUNDING = {"rni": "rn", "rzi": "rz", "rmi": "rm", "rpi": "rp"}
F64 = np.float64


class C:
    """Compile-time view of one instruction: its modifiers, types and operand accessors."""

    def __init__(self, k: CompiledKernel, ins: Instruction, pc: int) -> None:
        self.k = k
        self.ins = ins
        self.pc = pc
        self.parts = ins.opcode.split(".")
        self.base = self.parts[0]
        self.mods = self.parts[1:]
        self.types = [p for p in self.mods if p in TYPE_NAMES]
        self.ops = ins.operands

    def error(self, msg: str) -> PtxError:
        return self.k.error(self.ins, msg)

    def unsupported(self, what: str | None = None) -> PtxError:
        return self.error(f"unsupported instruction '{self.ins.opcode}'"
                          + (f" ({what})" if what else ""))

    def has(self, *mods: str) -> bool:
        return any(m in self.mods for m in mods)

    def space(self) -> str:
        for m in self.mods:
            if m in SPACE_NAMES:
                return SPACE_NAMES[m]
        return "generic"

    def rounding(self, default: str = "rn") -> str:
        for m in self.mods:
            if m in ROUNDING:
                return m
        return default

    def type(self, i: int = -1) -> str:
        if not self.types:
            raise self.error(f"instruction '{self.ins.opcode}' has no type")
        return self.types[i]

    def nops(self, n: int) -> None:
        if len(self.ops) < n:
            raise self.error(f"expected {n} operands, found {len(self.ops)}")

    # -- operands
    def reg(self, op) -> int:
        if isinstance(op, Reg) and op.name in self.k.reg_index:
            return self.k.reg_index[op.name]
        name = op.name if isinstance(op, (Reg, NotPred)) else op
        raise self.error(f"unknown register '{name}'")

    def src(self, op, t: str, checked: bool = True):
        """Getter ``w -> array`` of operand ``op`` read as PTX type ``t``. A register a
        wgmma may have in flight is checked on every read (async_check) unless
        ``checked`` is False (the wgmma's own reads)."""
        get = self._src(op, t)
        if checked and isinstance(op, Reg) and self.k.reg_index.get(op.name) \
                in self.k.async_registers:
            from nanotile.ptxemu.async_check import wgmma_read

            i, name = self.k.reg_index[op.name], op.name

            def checked_get(w):
                wgmma_read(w, i, name)
                return get(w)
            return checked_get
        return get

    def _src(self, op, t: str):
        k = self.k
        if isinstance(op, NotPred):
            i = self.reg(Reg(op.name))
            return lambda w: ~w.R[i]
        if t == "pred":
            if isinstance(op, Imm):
                arr = np.full(k.width, bool(op.value))
                return lambda w: arr
            i = self.reg(op)
            if k.reg_type[i] != "pred":
                raise self.error(f"'{op.name}' is not a predicate")
            return lambda w: w.R[i]
        dt = DTYPES[t]
        size = dt.itemsize
        if isinstance(op, Reg):
            name = op.name
            if name in ("%clock", "%clock64", "%globaltimer"):
                mask = (1 << (8 * size)) - 1

                def clock(w):
                    # a counter that moves forward on every read (timing loops terminate)
                    L = w.cta.launch
                    L.clock += 1000
                    return np.full(k.width, L.clock & mask, dtype=UINT[size]).view(dt)
                return clock
            if name in k.reg_index:
                i = k.reg_index[name]
                rt = k.reg_type[i]
                if rt == "pred":
                    raise self.error(f"predicate '{name}' used as a {t} operand")
                width = type_size(rt)
                if width == size:
                    if dt == UINT[size]:
                        return lambda w: w.R[i]
                    return lambda w: w.R[i].view(dt)
                u = UINT[size]
                return lambda w: w.R[i].astype(u).view(dt)
            if name in k.symbols:
                arr = np.full(k.width, k.symbols[name].address, dtype=UINT[size]).view(dt)
                return lambda w: arr
            raise self.error(f"unknown register or symbol '{name}'")
        if isinstance(op, Imm):
            if t in FLOATS:
                arr = np.full(k.width, op.value, dtype=dt)
            else:
                arr = np.full(k.width, op.value & ((1 << (8 * size)) - 1),
                              dtype=UINT[size]).view(dt)
            return lambda w: arr
        if isinstance(op, FImm):
            if t == "f32" and op.bits32 is not None:
                arr = np.full(k.width, op.bits32, np.uint32).view(np.float32)
            elif t == "f64" and op.bits64 is not None:
                arr = np.full(k.width, op.bits64, np.uint64).view(np.float64)
            elif t in FLOATS:
                arr = np.full(k.width, op.value, dtype=dt)
            else:
                bits = op.bits32 if op.bits32 is not None else op.bits64
                if bits is None:
                    bits = struct.unpack("<I", struct.pack("<f", op.value))[0]
                arr = np.full(k.width, bits & ((1 << (8 * size)) - 1),
                              dtype=UINT[size]).view(dt)
            return lambda w: arr
        raise self.error(f"unexpected operand {op!r}")

    def dst(self, op, t: str, checked: bool = True):
        """Setter ``(w, mask, values)`` writing ``values`` (PTX type ``t``) to ``op``; checked
        like ``src``."""
        put = self._dst(op, t)
        if checked and isinstance(op, Reg) and self.k.reg_index.get(op.name) \
                in self.k.async_registers:
            from nanotile.ptxemu.async_check import wgmma_write

            i, name = self.k.reg_index[op.name], op.name

            def checked_put(w, m, v):
                wgmma_write(w, i, name)
                return put(w, m, v)
            return checked_put
        return put

    def _dst(self, op, t: str):
        k = self.k
        if isinstance(op, Reg) and op.name == "_":
            return lambda w, m, v: None
        i = self.reg(op)
        rt = k.reg_type[i]
        if rt == "pred" or t == "pred":
            if rt != "pred" or t != "pred":
                raise self.error(f"type mismatch writing '{op.name}'")

            def set_pred(w, m, v):
                w.R[i] = v if m is w.full else np.where(m, v, w.R[i])
            return set_pred
        dt = DTYPES[t]
        size = dt.itemsize
        width = type_size(rt)
        u = UINT[size]
        if width == size:
            def set_same(w, m, v):
                vt = v.dtype
                if vt is not u:                 # identities first: a dtype compare costs more
                    if vt is dt:
                        v = v.view(u)
                    elif vt != u:
                        v = (v if vt == dt else v.astype(dt)).view(u)
                w.R[i] = v if m is w.full else np.where(m, v, w.R[i])
            return set_same
        uw = UINT[width]
        if width > size and t[0] == "s":
            sw = SINT[width]

            def set_sext(w, m, v):
                w.R[i] = np.where(m, v.astype(dt, copy=False).astype(sw).view(uw), w.R[i])
            return set_sext

        def set_conv(w, m, v):
            w.R[i] = np.where(m, v.astype(dt, copy=False).view(u).astype(uw), w.R[i])
        return set_conv

    def addr(self, op) -> tuple[str | None, object]:
        """(space of the named symbol or None, getter ``w -> uint64 addresses``)."""
        if not isinstance(op, Addr):
            raise self.error("expected an address operand [..]")
        off = np.uint64(op.offset & 0xFFFF_FFFF_FFFF_FFFF)
        k = self.k
        if op.base is None:
            arr = np.full(k.width, off, dtype=np.uint64)
            return None, lambda w: arr
        if op.base in k.reg_index:
            i = k.reg_index[op.base]
            rt = k.reg_type[i]
            if type_size(rt) == 8:
                return None, lambda w: w.R[i] + off
            return None, lambda w: w.R[i].astype(np.uint64) + off
        if op.base in k.symbols:
            sym = k.symbols[op.base]
            arr = np.full(k.width, np.uint64(sym.address) + off, dtype=np.uint64)
            return sym.space, lambda w: arr
        raise self.error(f"unknown register or symbol '{op.base}' in address")

    def mem_addr(self, op, space: str):
        """(effective space, getter) for a load/store address in ``space``."""
        symspace, af = self.addr(op)
        if symspace is None:
            return space, af
        if space == "generic":
            base = np.uint64(WINDOWS[symspace])
            return "generic", lambda w: af(w) + base
        if space == "param" and symspace == "local":
            return "local", af
        if symspace != space and not (space == "shared" and symspace == "shared"):
            raise self.error(f"symbol '{op.base}' is in the {symspace} space, not {space}")
        return space, af


def _items(op) -> list:
    return op.items if isinstance(op, Vec) else [op]


def _first_active(m: np.ndarray) -> int:
    return int(np.argmax(m))


def handler_registry(table: dict):
    """The decorator ``@op("name", ...)`` of a family module: it enters the handler in
    ``table`` (the module's ``HANDLERS``) under each name; ``ops`` merges the tables."""
    def op(*names: str):
        def reg(f):
            for n in names:
                table[n] = f
            return f
        return reg
    return op
