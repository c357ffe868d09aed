"""How much of cuTile's test corpus the PTX back end compiles (and ptxas accepts).

Runs every kernel of ../shared/corpus/cutile-tests that NVIDIA's tileiras compiles
(tileiras_times.csv rc 0) for the chosen targets, or a deterministic sample of them:

    .venv/bin/python bench/backend_cutile_tests.py [--targets sm_90,sm_100] [--sample N]
        [--no-ptxas] [--show-errors K]

Prints a table per target (compiled / assembled / refused / crashed) and the most
common refusal reasons. A crash (a Python exception other than CompileError) is a bug.
Then, per target, the kernels tileiras refuses (rc != 0: a type or op the target lacks,
all of them, never sampled): "refused where tileiras refuses: X/Y" counts those nanotile
refuses for the target (check-target-support: "... is not supported on sm_90").
"""

from __future__ import annotations

import argparse
import collections
import csv
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / ".." / "shared" / "corpus" / "cutile-tests"


def compilable(arch: str, refused: bool = False) -> list[str]:
    """The kernels tileiras compiles for ``arch`` (rc 0), or with ``refused`` those it
    refuses (rc != 0)."""
    with open(CORPUS / "tileiras_times.csv") as f:
        return sorted(r["name"] for r in csv.DictReader(f)
                      if r["arch"] == arch and (r["rc"] != "0") == refused)


def reason(message: str) -> str:
    """A short key grouping similar errors (numbers and names removed)."""
    first = (message.splitlines() or [""])[0]
    first = re.sub(r"^.*?error: ", "", first)
    first = re.sub(r"line \d+", "line N", first)
    return re.sub(r"\d+", "N", first)[:110]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", default="sm_90,sm_100")
    ap.add_argument("--sample", type=int, default=0, help="every k-th kernel so N are run")
    ap.add_argument("--no-ptxas", action="store_true")
    ap.add_argument("--show-errors", type=int, default=12)
    args = ap.parse_args()

    from nanotile.diagnostics import CompileError
    from nanotile.loader import load_file
    from nanotile.targets.compile import assemble, compile_to_ptx

    for arch in args.targets.split(","):
        names = compilable(arch)
        if args.sample and args.sample < len(names):
            step = len(names) / args.sample
            names = [names[int(i * step)] for i in range(args.sample)]
        counts = collections.Counter()
        reasons = collections.Counter()
        t0 = time.perf_counter()
        for name in names:
            try:
                ptx = compile_to_ptx(load_file(str(CORPUS / f"{name}.tileirbc")), arch)
                counts["compiled"] += 1
                if not args.no_ptxas:
                    assemble(ptx, arch)
                    counts["assembled"] += 1
            except CompileError as e:
                kind = "ptxas-rejected" if "ptxas" in str(e) else \
                    "crashed" if "internal error" in str(e) else "refused"
                counts[kind] += 1
                reasons[f"{kind}: {reason(str(e))}"] += 1
            except Exception as e:  # noqa: BLE001 - a crash is what this script reports
                counts["crashed"] += 1
                reasons[f"crash: {type(e).__name__}: {reason(str(e))}"] += 1
        total = len(names)
        ok = counts["assembled"] if not args.no_ptxas else counts["compiled"]
        print(f"\n{arch}: {total} kernels in {time.perf_counter() - t0:.0f}s")
        for key in ("compiled", "assembled", "refused", "ptxas-rejected", "crashed"):
            print(f"  {key:15s} {counts[key]:5d}  {100 * counts[key] / max(total, 1):5.1f}%")
        print(f"  rate: {100 * ok / max(total, 1):.1f}%")
        for text, n in reasons.most_common(args.show_errors):
            print(f"  {n:5d}  {text}")
        refused, misses = tileiras_refusals(arch, compile_to_ptx, load_file, CompileError)
        print(f"  refused where tileiras refuses: {refused}/{refused + len(misses)}")
        for name, what in misses:
            print(f"    not refused: {name}: {what}")
    return 0


def tileiras_refusals(arch: str, compile_to_ptx, load_file, error) -> tuple[int, list]:
    """(how many of the kernels tileiras refuses for ``arch`` nanotile refuses for the
    target, [(name, what nanotile did instead)])."""
    refused, misses = 0, []
    for name in compilable(arch, refused=True):
        try:
            compile_to_ptx(load_file(str(CORPUS / f"{name}.tileirbc")), arch)
            misses.append((name, "compiled"))
        except error as e:
            if f"is not supported on {arch}" in str(e):
                refused += 1
            else:
                misses.append((name, f"other error: {reason(str(e))}"))
    return refused, misses


if __name__ == "__main__":
    sys.exit(main())
