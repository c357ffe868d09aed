"""``run_ptx``: launch a PTX kernel on the emulator with NumPy arrays as arguments."""

from __future__ import annotations

import re
import struct
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from nanotile.ir.array_list import ArrayList
from nanotile.ptxemu.errors import MemoryFault, PtxError
from nanotile.ptxemu.fpmath import DTYPES, FLOATS, type_size
from nanotile.ptxemu.machine import Launch, Symbol, compile_kernel
from nanotile.ptxemu.memory import GlobalMemory, Space
from nanotile.ptxemu.ptx_parser import FImm, Imm, PtxModule, Reg, parse_ptx
from nanotile.ptxemu.tensormap import TensorMap


@dataclass
class RunStats:
    """What one launch did: warp instructions (one per instruction of each 32-lane warp
    with an active lane, however the emulator groups lanes: batched or not), lane
    instructions (active lanes summed over warp instructions) and wall time."""
    instructions: int
    lane_instructions: int
    seconds: float


@lru_cache(maxsize=32)
def _parse_cached(text: str, filename: str) -> PtxModule:
    return parse_ptx(text, filename)


BATCH_LANES = 4096


def _batchable(fn) -> bool:
    from nanotile.ptxemu.ops import batchable
    from nanotile.ptxemu.ptx_parser import Instruction, VarDecl
    for item in fn.body:
        if isinstance(item, Instruction) and not batchable(item):
            return False
        if isinstance(item, VarDecl) and item.space == ".shared":
            return False
        if isinstance(item, Instruction) and ".shared" in item.opcode:
            return False
    return True


def _has_barriers(fn) -> bool:
    from nanotile.ptxemu.ops import BATCHABLE
    from nanotile.ptxemu.ptx_parser import Instruction
    return any(isinstance(item, Instruction) and item.opcode.split(".")[0] not in BATCHABLE
               for item in fn.body)


def _dim3(v) -> tuple[int, int, int]:
    if isinstance(v, int):
        return (v, 1, 1)
    t = tuple(int(x) for x in v)
    return (t + (1, 1, 1))[:3]


def _global_vars(module: PtxModule, gmem: GlobalMemory) -> tuple[dict[str, Symbol], Space | None]:
    symbols: dict[str, Symbol] = {}
    const_decls = []
    for d in module.globals:
        for name, length in d.names:
            size = type_size(d.type) * (length or 1)
            data = _init_bytes(d.type, d.init, size, symbols, module) if d.init else None
            if d.space == ".global":
                symbols[name] = Symbol("global", gmem.alloc(size, data), size)
            elif d.space == ".const":
                const_decls.append((name, size, data, d.align or type_size(d.type)))
    const = None
    if const_decls:
        off = 0
        placed = []
        for name, size, data, align in const_decls:
            off = (off + align - 1) // align * align
            symbols[name] = Symbol("const", off, size)
            placed.append((off, data))
            off += size
        const = Space("const", off, readonly=False)
        for o, data in placed:
            if data:
                const.write_bytes(o, data)
        const.readonly = True
    return symbols, const


def _init_bytes(t: str, init: list, size: int, symbols, module) -> bytes:
    dt = DTYPES[t]
    out = bytearray()
    for v in init:
        if isinstance(v, Imm):
            if t in FLOATS:
                out += np.array([v.value], dtype=dt).tobytes()
            else:
                out += int(v.value & ((1 << (8 * dt.itemsize)) - 1)).to_bytes(dt.itemsize, "little")
        elif isinstance(v, FImm):
            out += np.array([v.value], dtype=dt if t in FLOATS else np.float32).tobytes()
        elif isinstance(v, Reg) and v.name in symbols:
            out += symbols[v.name].address.to_bytes(dt.itemsize, "little")
        else:
            raise PtxError(f"unsupported initializer {v!r}", module.filename)
    return bytes(out[:size]).ljust(size, b"\0")


def _pack_scalar(t: str, value, name: str) -> bytes:
    dt = DTYPES[t] if t in DTYPES else np.dtype(np.uint8)
    if t in FLOATS:
        return np.array([value], dtype=dt).tobytes()
    v = int(value)
    return (v & ((1 << (8 * dt.itemsize)) - 1)).to_bytes(dt.itemsize, "little")


_DYNAMIC_SHARED = re.compile(r"//[ \t]*nanotile:[ \t]*dynamic shared memory[ \t]+(\d+)[ \t]+bytes")
_ENTRY = re.compile(r"\.entry[ \t]+([A-Za-z_$][\w$]*)")


def declared_dynamic_shared(ptx: str, kernel: str) -> int:
    """Dynamic shared memory (bytes) that the PTX text asks for ``kernel``: nanotile writes
    ``// nanotile: dynamic shared memory N bytes`` in the body of a kernel whose shared
    buffer is a module-scope ``.extern .shared`` array (a GPU launcher passes N as
    sharedMemBytes); 0 when the kernel has no such line."""
    entries = list(_ENTRY.finditer(ptx))
    for i, m in enumerate(entries):
        if m.group(1) == kernel:
            end = entries[i + 1].start() if i + 1 < len(entries) else len(ptx)
            found = _DYNAMIC_SHARED.search(ptx, m.end(), end)
            return int(found.group(1)) if found else 0
    return 0


def run_ptx(ptx: str, kernel: str, grid=(1, 1, 1), block=None, args=(),
            shared_bytes: int | None = None,
            filename: str = "<ptx>", max_warp_steps: int = 50_000_000,
            batch: bool = True, progress=None, check_async: bool = True,
            interleave: bool = False) -> RunStats:
    """Run ``kernel`` from PTX text on the emulator.

    ``args`` follow the kernel's ``.param`` list (a nanotile kernel's hidden tensor maps
    may be left out: they are built from its ``// nanotile: tensor map`` lines and the
    arguments): a NumPy array is copied into emulated
    global memory and passed as its u64 address (and copied back after the run); an
    ``ArrayList`` (a cuTile list of arrays) has its element arrays copied in and back the
    same way and is passed as the address of its records (nanotile.ir.array_list); a
    ``TensorMap`` fills a 128-byte tensor-map parameter; ints/floats are packed as the
    parameter's type; ``bytes`` are passed as they are. ``block`` defaults to the kernel's
    ``.reqntid``/``.maxntid``; ``shared_bytes`` (the launch's dynamic shared memory)
    defaults to what the text declares for the kernel (``declared_dynamic_shared``). Raises ``PtxError`` on bad PTX, unsupported instructions and
    faults (with the instruction's line), and when one warp runs ``max_warp_steps``
    instructions (in all: a loop that blocks at a barrier each time round counts too).

    With ``batch`` (the default), a kernel made only of instructions that do not depend on
    warps, CTAs or shared memory (``ops.BATCHABLE``) runs many CTAs at once as one wide
    warp, and one with CTA barriers too (without a thread count: ``ops.batchable``) runs
    each CTA as one wide warp, CTA by CTA; the results are the same, only faster.
    ``progress(done, total)`` is called as CTAs finish.

    With ``check_async`` (the default), asynchronous work (wgmma, cp.async, bulk and
    tensor copies) is checked: using its results or changing its sources before the
    program waits for it raises PtxError (see async_check). With ``interleave``, a warp
    that arrives on an mbarrier lets the others run before it goes on (by default each
    warp runs until it blocks): another legal schedule, in which other hazards show."""
    t0 = time.perf_counter()
    module = _parse_cached(ptx, filename)
    gmem = GlobalMemory()
    gsyms, const = _global_vars(module, gmem)
    fn = module.functions.get(kernel)
    if fn is None or fn.body is None:
        compile_kernel(module, kernel, gsyms)       # raises the "no kernel named" error
    if block is None:
        nt = fn.directives.get(".reqntid") or fn.directives.get(".maxntid")
        if not nt:
            raise PtxError(f"kernel '{kernel}' has no .reqntid/.maxntid: pass block=",
                           module.filename)
        block = tuple(nt)
    if shared_bytes is None:
        shared_bytes = declared_dynamic_shared(ptx, kernel)
    grid, block = _dim3(grid), _dim3(block)
    nthreads = block[0] * block[1] * block[2]
    if nthreads > 1024:
        raise PtxError(f"block of {nthreads} threads exceeds 1024", module.filename)
    width = 32
    if batch and shared_bytes == 0 and _batchable(fn):
        # many CTAs side by side; with barriers, one CTA (its warps side by side) at a time
        ncta = grid[0] * grid[1] * grid[2]
        per = 1 if _has_barriers(fn) else max(1, min(ncta, BATCH_LANES // nthreads))
        width = nthreads * per
    k = compile_kernel(module, kernel, gsyms, width=width, check_async=check_async)
    args = _with_tensor_maps(ptx, kernel, list(args), len(k.params))
    if len(args) != len(k.params):
        raise PtxError(f"kernel '{kernel}' takes {len(k.params)} parameters, got {len(args)}",
                       module.filename)
    addresses: dict[int, int] = {}
    arrays: list[tuple[np.ndarray, int]] = []

    def place(a: np.ndarray) -> int:
        if id(a) not in addresses:
            if not a.flags.c_contiguous:
                raise ValueError("array arguments must be C-contiguous")
            addresses[id(a)] = gmem.alloc(a.nbytes, a.tobytes())
            arrays.append((a, addresses[id(a)]))
        return addresses[id(a)]

    records: dict[int, np.ndarray] = {}  # list argument -> its records

    for a in args:
        if isinstance(a, np.ndarray):
            place(a)
        elif isinstance(a, TensorMap):
            place(a.array)
        elif isinstance(a, ArrayList) and id(a) not in records:
            # the elements as array arguments, then the records holding their addresses
            records[id(a)] = a.records([place(e) for e in a.arrays])
            place(records[id(a)])
    gmem.finalise()
    pbytes = bytearray(k.param_size)
    for (pname, decl, off), a in zip(k.params, args):
        size = type_size(decl.type) * (decl.names[0][1] or 1)
        if isinstance(a, np.ndarray):
            data = addresses[id(a)].to_bytes(8, "little")
        elif isinstance(a, ArrayList):
            data = addresses[id(records[id(a)])].to_bytes(8, "little")
        elif isinstance(a, TensorMap):
            try:
                data = a.encode(addresses[id(a.array)])
            except ValueError as error:
                raise PtxError(f"argument for '{pname}': {error}", module.filename) from None
        elif isinstance(a, (bytes, bytearray)):
            data = bytes(a)
        else:
            data = _pack_scalar(decl.type, a, pname)
        if len(data) > size:
            raise PtxError(f"argument for '{pname}' is {len(data)} bytes, the parameter {size}",
                           module.filename)
        pbytes[off:off + len(data)] = data
    launch = Launch(k, gmem, const, grid, block, bytes(pbytes), shared_bytes, max_warp_steps,
                    progress, interleave)
    with np.errstate(all="ignore"):
        try:
            launch.run()
        except MemoryFault as exc:   # faults outside an instruction (should not happen)
            raise PtxError(str(exc), module.filename) from None
    for a, addr in arrays:
        if a.flags.writeable:
            raw = gmem.read_bytes(addr, a.nbytes)
            a.reshape(-1).view(np.uint8)[:] = np.frombuffer(raw, dtype=np.uint8)
    return RunStats(launch.instructions, launch.lane_instructions, time.perf_counter() - t0)


def _with_tensor_maps(ptx: str, kernel: str, args: list, params: int) -> list:
    """``args`` and, when they stop short of the kernel's hidden tensor-map parameters, a
    TensorMap for each map the kernel's ``// nanotile: tensor map`` lines describe (base,
    shape and strides read from the arguments: nanotile.ir.tensor_maps)."""
    from nanotile.ir.tensor_maps import SWIZZLE_MODES, tensor_maps

    maps = tensor_maps(ptx, kernel)
    if not maps or len(args) != params - len(maps):
        return args
    out = list(args)
    for _, spec in maps:
        if isinstance(args[spec.base], ArrayList):
            raise PtxError(f"kernel '{kernel}': a tensor map over the records of a list "
                           f"argument (argument {spec.base}) is not supported")
        dims, strides = spec.sizes(args)
        out.append(TensorMap(args[spec.base], spec.box, swizzle=SWIZZLE_MODES[spec.swizzle],
                             dims=tuple(dims), strides=tuple(strides),
                             element=spec.data_type))
    return out


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]
