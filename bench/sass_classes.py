"""The tensor-core and TMA instructions in nanotile's SASS beside tileiras', per kernel.

For each kernel (the cuTile corpus kernels named, and the cutile-tests kernels whose name
contains one of the -k words) and target, both compilers' cubins are disassembled
(``cuobjdump -sass``, the nvidia-cuda-cuobjdump wheel) and these classes counted:
HGMMA/QGMMA/IGMMA (wgmma), HMMA/IMMA/QMMA (mma.sync), UTCHMMA/UTCQMMA (tcgen05.mma), UTMALDG and
UTMASTG (TMA copies in and out), with the total instruction count.

    .venv/bin/python bench/sass_classes.py [--targets sm_90,sm_100]
        [--kernels matmul_f16,matmul_f16_tma,layernorm] [-k matmul -k mma ...]

A cell reads nanotile/tileiras; '-' where a compiler refuses the kernel.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / ".." / "shared" / "corpus"
CLASSES = ["HGMMA", "HMMA", "UTCHMMA", "UTMALDG", "UTMASTG"]
# SASS opcodes counted as one class: wgmma on f8 and integers (QGMMA, IGMMA), mma.sync on
# them (QMMA, IMMA), tcgen05.mma's kinds
ALIASES = {"QGMMA": "HGMMA", "IGMMA": "HGMMA", "IMMA": "HMMA", "QMMA": "HMMA",
           "UTCQMMA": "UTCHMMA", "UTCIMMA": "UTCHMMA"}


def classes(cubin: bytes) -> Counter:
    from nanotile.targets.compile import ptxas_path

    tool = ptxas_path().parent / "cuobjdump"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        text = subprocess.run([str(tool), "-sass", str(path)], check=True,
                              capture_output=True, text=True).stdout
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", text)
    counts = Counter(ALIASES.get(op, op) for op in ops)
    counts["total"] = len(ops)
    return counts


def nanotile_cubin(path: Path, gpu: str) -> bytes | None:
    from nanotile.diagnostics import CompileError
    from nanotile.loader import load_file
    from nanotile.targets.compile import assemble, compile_to_ptx

    try:
        return assemble(compile_to_ptx(load_file(str(path)), gpu), gpu)[0]
    except CompileError:
        return None


def tileiras_cubin(path: Path, gpu: str) -> bytes | None:
    from nanotile.targets.compile import ptxas_path

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "k.cubin"
        proc = subprocess.run([str(ptxas_path().parent / "tileiras"), f"--gpu-name={gpu}",
                               str(path), "-o", str(out)], check=False, capture_output=True)
        return out.read_bytes() if proc.returncode == 0 and out.exists() else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="sm_90,sm_100")
    ap.add_argument("--kernels", default="matmul_f16,matmul_f16_tma,layernorm")
    ap.add_argument("-k", dest="words", action="append", default=[])
    args = ap.parse_args()
    paths = [CORPUS / "cutile" / f"{name}.tileirbc" for name in args.kernels.split(",") if name]
    paths += sorted(p for p in (CORPUS / "cutile-tests").glob("*.tileirbc")
                    if any(w in p.stem for w in args.words))
    head = f"{'kernel':60s} {'target':6s} " + " ".join(f"{c:>11s}" for c in CLASSES + ["total"])
    print(head + "\n" + "-" * len(head))
    for gpu in args.targets.split(","):
        for path in paths:
            mine, theirs = nanotile_cubin(path, gpu), tileiras_cubin(path, gpu)
            ours = classes(mine) if mine is not None else None
            ref = classes(theirs) if theirs is not None else None

            def cell(c: str) -> str:
                a = str(ours[c]) if ours is not None else "-"
                b = str(ref[c]) if ref is not None else "-"
                return f"{a + '/' + b:>11s}"
            print(f"{path.stem[:60]:60s} {gpu:6s} " + " ".join(cell(c) for c in CLASSES +
                                                               ["total"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
