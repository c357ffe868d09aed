"""The PTX back end of two revisions side by side, on the corpus kernels, per target:
PTX instructions, SASS instructions and registers (ptxas), warp instructions the PTX
emulator executes on corpus_cases' inputs, and the seconds to compile to PTX; then the
totals per target over the kernels both revisions compile.

The "before" revision is checked out into a temporary git worktree; each revision is
measured by a fresh Python process whose import path starts at that checkout, so both run
their own nanotile on the same inputs (the working tree is "after").

    .venv/bin/python bench/backend_before_after.py --before REV [--after REV]
        [--targets sm_90,sm_100] [--kernels a,b]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ["vector_add", "scaled_add", "control_flow", "gelu_cast", "histogram_atomic",
           "layernorm", "matmul_f16", "matmul_f16_tma", "row_softmax", "sum_reduce_atomic",
           "transpose"]

# Run inside the measured checkout (its path first on sys.path): one JSON line per case.
MEASURE = r"""
import copy, json, sys, time
import numpy as np
root, corpus, targets, kernels = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
sys.path[:0] = [root, root + "/tests/targets", root + "/bench"]
from corpus_cases import corpus_case
from mma_quality import text_sizes
from nanotile.interp import cutile_args
from nanotile.loader import load_file
from nanotile.ptxemu import run_ptx
from nanotile.targets.compile import assemble, compile_to_ptx
for gpu in targets.split(","):
    for name in kernels.split(","):
        row = {"kernel": name, "gpu": gpu}
        try:
            start = time.process_time()
            ptx = compile_to_ptx(load_file(f"{corpus}/{name}.tileirbc"), gpu)
            row["seconds"] = time.process_time() - start
            row["ptx"] = sum(1 for line in ptx.splitlines()
                             if line.startswith("\t") and line.rstrip().endswith(";")
                             and not line.lstrip().startswith((".", "//")))
            cubin, log = assemble(ptx, gpu)
            row["sass"] = sum(text_sizes(cubin).values()) // 16
            grid, args, _, _, _ = corpus_case(name, np.random.default_rng(1))
            stats = run_ptx(ptx, name, grid=grid, args=cutile_args(*copy.deepcopy(args)))
            row["warp_instructions"] = stats.instructions
        except Exception as e:  # a refused kernel is a row too
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:60]}"
        print(json.dumps(row), flush=True)
"""


def measure(checkout: Path, targets: str, kernels: str) -> dict[tuple[str, str], dict]:
    corpus = (ROOT / ".." / "shared" / "corpus" / "cutile").resolve()
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(checkout), str(corpus), targets,
                           kernels], check=False, capture_output=True, text=True,
                          cwd=checkout)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not rows:
        sys.exit(f"measuring {checkout} failed:\n{proc.stderr[-2000:]}")
    return {(r["kernel"], r["gpu"]): r for r in rows}


def checkout_of(revision: str | None, into: Path) -> Path:
    if revision is None:
        return ROOT
    subprocess.run(["git", "worktree", "add", "--detach", str(into), revision], cwd=ROOT,
                   check=True, capture_output=True)
    return into


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="git revision measured as 'before'")
    ap.add_argument("--after", default=None, help="git revision (default: the working tree)")
    ap.add_argument("--targets", default="sm_90,sm_100")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = [checkout_of(args.before, Path(tmp) / "before"),
                 checkout_of(args.after, Path(tmp) / "after")]
        try:
            before, after = (measure(t, args.targets, args.kernels) for t in trees)
        finally:
            for tree in trees:
                if tree != ROOT:
                    subprocess.run(["git", "worktree", "remove", "--force", str(tree)],
                                   cwd=ROOT, check=False, capture_output=True)
    columns = [("ptx", "PTX instrs"), ("sass", "SASS instrs"),
               ("warp_instructions", "emulated warp instrs"), ("seconds", "compile CPU s")]
    print(f"{'kernel':18s} {'target':7s} | " +
          " | ".join(f"{title:>21s}" for _, title in columns))
    print(f"{'':26s} | " + " | ".join(f"{'before':>10s} {'after':>10s}" for _ in columns))
    for key in sorted(after, key=lambda k: (k[1], KERNELS.index(k[0])
                                            if k[0] in KERNELS else 0)):
        cells = []
        for field, _ in columns:
            pair = []
            for rows in (before, after):
                row = rows.get(key, {})
                value = row.get(field)
                pair.append("refused" if "error" in row else
                            f"{value:.2f}" if isinstance(value, float) else
                            "-" if value is None else str(value))
            cells.append(f"{pair[0]:>10s} {pair[1]:>10s}")
        print(f"{key[0]:18s} {key[1]:7s} | " + " | ".join(cells))
    for gpu in args.targets.split(","):
        both = [k for k in after if k[1] == gpu and "error" not in after[k]
                and "error" not in before.get(k, {"error": 1})]
        cells = []
        for field, _ in columns:
            totals = [sum(rows[k][field] for k in both) for rows in (before, after)]
            cells.append(" ".join(f"{t:>10.2f}" if isinstance(t, float) else f"{t:>10d}"
                                  for t in totals))
        print(f"{'total (' + str(len(both)) + ')':18s} {gpu:7s} | " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
