"""Time the dialect verifier over the whole cuTile corpus.

    python bench/verify_bench.py [--source bytecode|text] [--repeat N]

Reads every kernel of ../shared/corpus/cutile and cutile-tests (bytecode by default, the
reading is not timed), runs ``verify_module`` on each and prints the time per kernel
(mean, median, 95th percentile, max), the ops verified per second, and the slowest
kernels. Any kernel the verifier rejects is listed: the corpus is valid input.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nanotile.verify import verify_module

CORPUS = REPO / ".." / "shared" / "corpus"


def load(source: str):
    suffix = "*.tileirbc" if source == "bytecode" else "*.mlir"
    paths = sorted((CORPUS / "cutile").glob(suffix)) + sorted(
        (CORPUS / "cutile-tests").glob(suffix))
    if source == "bytecode":
        from nanotile.bytecode.reader import read_bytecode
        return [(p.name, read_bytecode(p.read_bytes(), str(p))) for p in paths]
    from nanotile.ir.parser import parse_text
    return [(p.name, parse_text(p.read_text(), str(p))) for p in paths]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=("bytecode", "text"), default="bytecode")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs per kernel")
    args = ap.parse_args()
    modules = load(args.source)
    if modules:
        verify_module(modules[0][1])  # warm up: the rule modules are imported on first use
    times: list[tuple[float, str, int]] = []
    rejected = []
    for name, module in modules:
        n_ops = sum(1 for _ in module.walk())
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            diags = verify_module(module)
            best = min(best, time.perf_counter() - t0)
        times.append((best, name, n_ops))
        if any(d.severity == "error" for d in diags):
            rejected.append((name, diags[0].message))
    secs = sorted(t for t, _, _ in times)
    ops = sum(n for _, _, n in times)
    ms = [t * 1e3 for t in secs]
    print(f"kernels verified: {len(times)} ({args.source}), ops: {ops}")
    print(f"{'per kernel':<12} {'mean':>8} {'median':>8} {'p95':>8} {'max':>8}")
    p95 = ms[int(0.95 * (len(ms) - 1))]
    print(f"{'ms':<12} {statistics.mean(ms):8.3f} {statistics.median(ms):8.3f} "
          f"{p95:8.3f} {ms[-1]:8.3f}")
    print(f"total {sum(secs):.3f} s, {ops / max(sum(secs), 1e-9):,.0f} ops/s")
    print("slowest kernels:")
    for t, name, n in sorted(times, reverse=True)[:5]:
        print(f"  {t * 1e3:8.3f} ms  {n:5d} ops  {name}")
    print(f"rejected: {len(rejected)}")
    for name, msg in rejected[:10]:
        print(f"  {name}: {msg}")
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
