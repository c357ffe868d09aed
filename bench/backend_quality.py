"""Code quality of the PTX back end beside NVIDIA's tileiras, per kernel and target.

For each kernel of ../shared/corpus/cutile and each target (sm_90 -> sm_90a, sm_100 ->
sm_100a) it prints registers, spill bytes (stores + loads) and shared memory per CTA as
``ptxas -v`` reports them (plus the dynamic shared memory the PTX declares), SASS
instructions (the cubin's ``.text.<kernel>`` bytes / 16: every sm_90/sm_100 instruction is
16 bytes; no cuobjdump is needed), and the compile time:

- nanotile: bytecode -> PTX (nanotile) and PTX -> cubin (ptxas), timed separately;
- tileiras: ``tileiras --gpu-name=... K.tileirbc`` wall time and the SASS of the cubin it
  writes; registers/spills/shared memory come from ``ptxas -v`` on the PTX tileiras
  generated for the same bytecode, shipped in corpus/cutile/ptx/ (tileiras does not print
  them).

    .venv/bin/python bench/backend_quality.py [--targets sm_90,sm_100] [--kernels a,b]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / ".." / "shared" / "corpus" / "cutile"
KERNELS = ["vector_add", "scaled_add", "control_flow", "gelu_cast", "histogram_atomic",
           "layernorm", "matmul_f16", "matmul_f16_tma", "row_softmax", "sum_reduce_atomic",
           "transpose"]


def ptxas_usage(ptx: str, arch: str) -> tuple[dict[str, int], float]:
    """(registers, spill bytes, shared bytes) from ``ptxas -v``, and its wall time."""
    from nanotile.targets.compile import ptxas_path

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        t0 = time.perf_counter()
        proc = subprocess.run([str(ptxas_path()), "-v", f"-arch={arch}", str(src), "-o",
                               str(Path(tmp) / "k.cubin")], check=False, capture_output=True,
                              text=True)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            return {"error": 1}, seconds
        sass = sass_instructions((Path(tmp) / "k.cubin").read_bytes())
    text = proc.stderr

    def number(pattern: str) -> int:
        return sum(int(m) for m in re.findall(pattern, text))
    return {"regs": number(r"Used (\d+) registers"),
            "spill": number(r"(\d+) bytes spill stores") + number(r"(\d+) bytes spill loads"),
            "smem": number(r"(\d+) bytes smem"), "sass": sass}, seconds


def sass_instructions(cubin: bytes) -> int:
    """SASS instructions of all kernels of a cubin (16 bytes each on sm_90/sm_100)."""
    from mma_quality import text_sizes

    return sum(text_sizes(cubin).values()) // 16


def tileiras_run(path: Path, gpu: str) -> tuple[float, int] | None:
    """tileiras' wall time and the SASS instructions of its cubin (None if it fails)."""
    exe = _tool("tileiras")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run([str(exe), f"--gpu-name={gpu}", str(path), "-o",
                               str(Path(tmp) / "k.cubin")], check=False, capture_output=True)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            return None
        return seconds, sass_instructions((Path(tmp) / "k.cubin").read_bytes())


def _tool(name: str) -> Path | None:
    from nanotile.targets.compile import ptxas_path

    ptxas = ptxas_path()
    candidate = ptxas.parent / name if ptxas else None
    return candidate if candidate and candidate.exists() else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="sm_90,sm_100")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    args = ap.parse_args()
    from nanotile.diagnostics import CompileError
    from nanotile.loader import load_file
    from nanotile.targets.compile import compile_to_ptx
    from nanotile.targets.ptx.builder import dynamic_shared_bytes
    from nanotile.targets.target import get_target

    head = (f"{'kernel':18s} {'target':7s} | {'regs':>4s} {'spill':>5s} {'smem':>6s} "
            f"{'SASS':>5s} {'ptx s':>6s} {'ptxas s':>7s} | {'regs':>4s} {'spill':>5s} "
            f"{'smem':>6s} {'SASS':>5s} {'tileiras s':>10s}")
    print(f"{'':26s} | {'nanotile':^38s} | {'tileiras':^36s}")
    print(head)
    print("-" * len(head))
    for gpu in args.targets.split(","):
        arch = get_target(gpu).ptxas_arch
        for name in args.kernels.split(","):
            path = CORPUS / f"{name}.tileirbc"
            t0 = time.perf_counter()
            try:
                ptx = compile_to_ptx(load_file(str(path)), gpu)
            except CompileError as e:
                print(f"{name:18s} {gpu:7s} | refused: {str(e).splitlines()[0][:60]}")
                continue
            ptx_s = time.perf_counter() - t0
            mine, ptxas_s = ptxas_usage(ptx, arch)
            if "smem" in mine:  # ptxas -v counts static shared memory only
                mine["smem"] += dynamic_shared_bytes(ptx, name)
            ref_ptx = CORPUS / "ptx" / f"{name}.{gpu}.ptx"
            theirs = ptxas_usage(ref_ptx.read_text(), arch)[0] if ref_ptx.exists() else {}
            tileiras = tileiras_run(path, gpu)
            tt, their_sass = tileiras if tileiras is not None else (float("nan"), None)

            def cols(u: dict) -> str:
                if "error" in u or not u:
                    return f"{'-':>4s} {'-':>5s} {'-':>6s}"
                return f"{u['regs']:4d} {u['spill']:5d} {u['smem']:6d}"
            sass = f"{mine['sass']:5d}" if "sass" in mine else f"{'-':>5s}"
            theirs_sass = f"{their_sass:5d}" if their_sass is not None else f"{'-':>5s}"
            print(f"{name:18s} {gpu:7s} | {cols(mine)} {sass} {ptx_s:6.2f} {ptxas_s:7.2f} | "
                  f"{cols(theirs)} {theirs_sass} {tt:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
