"""Helpers for emulator unit tests: wrap one instruction in a kernel, run it per lane.

``elementwise("add.rz.f32 {d}, {a}, {b};", ["f32", "f32"], "f32", a, b)`` builds a kernel in
which thread i loads a[i], b[i] from global memory, runs the instruction and stores d[i].
Every kernel built here is also checked with NVIDIA's ptxas (when installed), so the tests
only feed the emulator PTX that NVIDIA's assembler accepts.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from nanotile.ptxemu import run_ptx
from nanotile.ptxemu.fpmath import DTYPES

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"
_CHECKED: set[str] = set()


def ptxas_path() -> Path | None:
    """NVIDIA's ptxas from the installed ``nvidia`` package, if any."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        cand = Path(loc) / "cu13" / "bin" / "ptxas"
        if cand.exists():
            return cand
    return None


def assembled(text: str) -> str:
    """``text``, after checking that NVIDIA's ptxas accepts it (skipped without ptxas)."""
    if text not in _CHECKED and ptxas_path() is not None:
        target = re.search(r"^\.target\s+(\w+)", text, re.MULTILINE)
        msg = ptxas_check(text, target.group(1) if target else "sm_90")
        assert msg is None, f"ptxas rejects the test kernel:\n{msg}\n{text}"
        _CHECKED.add(text)
    return text


def ptxas_check(text: str, arch: str = "sm_90") -> str | None:
    """None when ptxas accepts the text, else its messages."""
    exe = ptxas_path()
    assert exe is not None
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(text)
        r = subprocess.run([str(exe), f"-arch={arch}", str(src), "-o", str(Path(d) / "k.cubin")],
                           capture_output=True, text=True, check=False)
    return None if r.returncode == 0 else r.stderr


_REG = {1: "%hs", 2: "%hs", 4: "%rs", 8: "%ds"}
_DECL = {"%hs": ".b16", "%rs": ".b32", "%ds": ".b64"}


def _reg(t: str, role: str) -> str:
    if t == "pred":
        return f"%p{role}"
    size = DTYPES[t].itemsize
    return f"{_REG[size]}{role}"


def _ld_type(t: str) -> str:
    size = DTYPES[t].itemsize
    return f"b{8 * max(size, 2)}" if size >= 2 else "b8"


def elementwise(instr: str, in_types: list[str], out_type: str, *arrays: np.ndarray,
                extra: str = "") -> np.ndarray:
    """Run ``instr`` once per element; placeholders {d} {a} {b} {c} name the registers.
    Inputs of type pred are given as bool arrays."""
    n = len(arrays[0])
    names = "abc"
    regs = {names[i]: _reg(t, names[i]) for i, t in enumerate(in_types)}
    regs["d"] = _reg(out_type, "d")
    lines = []
    params = []
    for i, t in enumerate(in_types):
        params.append(f".param .u64 p{i}")
        size = 1 if t == "pred" else DTYPES[t].itemsize
        lines += [f"ld.param.u64 %rd{i}, [p{i}];", f"mul.wide.u32 %rd10, %r0, {size};",
                  f"add.s64 %rd10, %rd{i}, %rd10;"]
        if t == "pred":
            lines += ["ld.global.u8 %hs9, [%rd10];", f"setp.ne.u16 {regs[names[i]]}, %hs9, 0;"]
        elif DTYPES[t].itemsize == 1:
            lines += [f"ld.global.u8 {regs[names[i]]}, [%rd10];"]
        else:
            lines += [f"ld.global.{_ld_type(t)} {regs[names[i]]}, [%rd10];"]
    params.append(".param .u64 pout")
    osize = 1 if out_type == "pred" else DTYPES[out_type].itemsize
    lines.append(instr.format(**regs))
    lines += ["ld.param.u64 %rd8, [pout];", f"mul.wide.u32 %rd10, %r0, {osize};",
              "add.s64 %rd10, %rd8, %rd10;"]
    if out_type == "pred":
        lines += [f"selp.u16 %hs9, 1, 0, {regs['d']};", "st.global.u8 [%rd10], %hs9;"]
    elif osize == 1:
        lines += [f"st.global.u8 [%rd10], {regs['d']};"]
    else:
        lines += [f"st.global.{_ld_type(out_type)} [%rd10], {regs['d']};"]
    decls = [".reg .pred %p<4>;", ".reg .pred %pa, %pb, %pc, %pd;", ".reg .b32 %r<4>;",
             ".reg .b64 %rd<12>;"]
    decls += [f".reg {d} {r}a, {r}b, {r}c, {r}d, {r}9;" for r, d in _DECL.items()]
    body = "\n  ".join(decls + [extra, "mov.u32 %r0, %tid.x;"] + lines + ["ret;"])
    text = f"{HEADER}.visible .entry k({', '.join(params)})\n{{\n  {body}\n}}\n"
    assembled(text)
    out = np.zeros(n, dtype=np.uint8 if out_type == "pred" else DTYPES[out_type])
    ins = [a.astype(np.uint8) if t == "pred" else np.ascontiguousarray(a, dtype=DTYPES[t])
           for a, t in zip(arrays, in_types)]
    assert n <= 1024
    run_ptx(text, "k", grid=(1,), block=(n,), args=ins + [out])
    return out.astype(bool) if out_type == "pred" else out


def kernel(params: str, body: str, name: str = "k") -> str:
    """A whole kernel from a parameter list and a body (check it with ``assembled``)."""
    return f"{HEADER}.visible .entry {name}({params})\n{{\n{body}\n}}\n"


def f32(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(np.float32)[0]


def bits32(x) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])
