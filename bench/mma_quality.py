"""mma.sync against the FMA loop on cuTile corpus kernels (default matmul_f16): registers,
spill bytes and shared memory (ptxas -v), SASS instructions (the cubin's .text sections,
16 bytes per instruction on sm_90/sm_100) and warp instructions executed in the PTX
emulator on corpus_cases' inputs, per target, with mma.sync planned (mma_plan.plan) and
refused (every mmaf then an FMA loop).

    .venv/bin/python bench/mma_quality.py [KERNEL ...]
"""

from __future__ import annotations

import copy
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "targets"))
CORPUS = ROOT / ".." / "shared" / "corpus" / "cutile"


def text_sizes(cubin: bytes) -> dict[str, int]:
    """Bytes of each ``.text.<kernel>`` section of an ELF64 cubin."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize)
            for i in range(shnum)]
    names = secs[shstrndx][4]
    out = {}
    for s in secs:
        name = cubin[names + s[0]:cubin.index(b"\0", names + s[0])].decode()
        if name.startswith(".text."):
            out[name[6:]] = s[5]
    return out


def usage(ptx: str, arch: str) -> dict | str:
    from nanotile.targets.compile import ptxas_path

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        proc = subprocess.run([str(ptxas_path()), "-v", f"-arch={arch}", str(src), "-o",
                               f"{tmp}/k.cubin"], capture_output=True, text=True, check=False)
        if proc.returncode:
            return proc.stderr[:200]
        cubin = Path(f"{tmp}/k.cubin").read_bytes()

    def number(pattern: str) -> int:
        return sum(int(m) for m in re.findall(pattern, proc.stderr))
    return {"regs": number(r"Used (\d+) registers"),
            "spill": number(r"(\d+) bytes spill stores") + number(r"(\d+) bytes spill loads"),
            "smem": number(r"(\d+) bytes smem"), "sass": sum(text_sizes(cubin).values()) // 16}


def main() -> int:
    from corpus_cases import corpus_case

    from nanotile.interp import cutile_args
    from nanotile.loader import load_file
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx
    from nanotile.targets.ptx import assign_layouts, mma_plan
    from nanotile.targets.ptx.builder import dynamic_shared_bytes
    from nanotile.targets.target import get_target

    original = mma_plan.plan
    for name in sys.argv[1:] or ["matmul_f16"]:
        path = str(CORPUS / f"{name}.tileirbc")
        for gpu in ("sm_90", "sm_100"):
            for mode in ("fma", "mma"):
                chosen = original if mode == "mma" else (lambda *a, **k: None)
                mma_plan.plan = assign_layouts.plan = chosen
                ptx = compile_to_ptx(load_file(path), gpu)
                u = usage(ptx, get_target(gpu).ptxas_arch)
                grid, args, _, _, _ = corpus_case(name, np.random.default_rng(1))
                stats = run_ptx(ptx, name, grid=grid, args=cutile_args(*copy.deepcopy(args)))
                print(f"{name} {gpu} {mode}: {u} mma.sync={ptx.count('mma.sync')} "
                      f"dynamic_smem={dynamic_shared_bytes(ptx, name)} "
                      f"emulated_warp_instructions={stats.instructions}", flush=True)
    mma_plan.plan = assign_layouts.plan = original
    return 0


if __name__ == "__main__":
    sys.exit(main())
