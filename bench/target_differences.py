"""Where nanotile's sm_90 and sm_100 PTX differ, per kernel (issue 16, must-show 2).

Each kernel (the cuTile corpus's, and the cutile-tests corpus's: all, or --sample N of
them chosen evenly over the sorted names, or those whose name contains a -k word) is
compiled for sm_90 and sm_100. A row says whether the two PTX texts differ beyond the
header (``.version`` / ``.target``), and which instruction classes occur a different
number of times (below: ``CLASSES``, each counted by its opcode prefix).

The hardware differs where a kernel has an MMA (mmaf, mmai, mmaf_scaled) that the two
GPUs run differently: Hopper's tensor cores take wgmma (HGMMA in SASS) or mma.sync (HMMA),
Blackwell's tcgen05 with the accumulator in tensor memory (UTCHMMA / UTCQMMA). The
oracle is tileiras: with --tileiras each MMA kernel is compiled by tileiras for both
targets and its tensor-core SASS classes (sass_classes.py) compared (column
``tileiras``: sm_90's classes | sm_100's, FMA where it has none); without it every MMA
kernel counts as one whose hardware differs. A kernel whose nanotile PTX is the same
modulo header although its hardware differs is flagged ``SAME!``.

    .venv/bin/python bench/target_differences.py [--sample N] [-k WORD ...] [--mma]
        [--tileiras] [--timeout 60] [--jobs 2] [--all-rows]

Rows are printed for the kernels with an MMA and those whose PTX differs (--all-rows:
every kernel), then a summary.
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing
import re
import signal
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))  # sass_classes
CORPUS = ROOT / ".." / "shared" / "corpus"
TARGETS = ("sm_90", "sm_100")
MMA_OPS = ("mmaf", "mmai", "mmaf_scaled")
# instruction class -> the opcode prefixes counted in it (first match wins)
CLASSES = {
    "tcgen05.mma": ("tcgen05.mma",),
    "tcgen05.ldst": ("tcgen05.ld", "tcgen05.st", "tcgen05.wait", "tcgen05.cp"),
    "tcgen05.other": ("tcgen05.",),
    "wgmma": ("wgmma.",),
    "mma.sync": ("mma.sync",),
    "ldmatrix": ("ldmatrix", "stmatrix"),
    "TMA": ("cp.async.bulk.tensor", "cp.reduce.async.bulk.tensor"),
    "mbarrier": ("mbarrier.",),
    "cvt.f4/e8m0": ("cvt.rn.satfinite.e2m1x2", "cvt.rz.satfinite.ue8m0x2",
                    "cvt.rn.f16x2.e2m1x2", "cvt.rn.bf16x2.ue8m0x2"),
    "fence": ("fence.",),
}


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def body(ptx: str) -> list[str]:
    """The PTX without its header lines (what the target writes at the top)."""
    return [line for line in ptx.splitlines()
            if not line.startswith((".version", ".target", "//"))]


def instruction_classes(ptx: str) -> Counter:
    counts: Counter = Counter()
    for line in ptx.splitlines():
        match = re.match(r"\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)", line)
        if match is None:
            continue
        opcode = match.group(1)
        for name, prefixes in CLASSES.items():
            if opcode.startswith(prefixes):
                counts[name] += 1
                break
    return counts


TENSOR_CLASSES = ("HGMMA", "HMMA", "UTCHMMA")


def tileiras_tensor_classes(path: str, target: str) -> str:
    """The tensor-core SASS classes in tileiras' cubin ('FMA' if none, '-' if refused)."""
    from sass_classes import classes, tileiras_cubin

    cubin = tileiras_cubin(Path(path), target)
    if cubin is None:
        return "-"
    counts = classes(cubin)
    return "+".join(c for c in TENSOR_CLASSES if counts[c]) or "FMA"


def compare(job: tuple[str, int, bool]) -> dict:
    """One kernel's row: mma ops, whether the PTX differs, the classes that differ."""
    path, timeout, oracle = job
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    row = {"kernel": Path(path).stem, "mma": "", "status": "", "classes": {}, "tileiras": ""}
    try:
        row.update(_compare(path, oracle))
    except _Timeout:
        row["status"] = "timeout"
    except Exception as e:  # noqa: BLE001 - a bench row, not a crash
        row["status"] = f"crash: {type(e).__name__}"
    finally:
        signal.alarm(0)
    return row


def _compare(path: str, oracle: bool) -> dict:
    import nanotile
    from nanotile.diagnostics import CompileError
    from nanotile.targets.compile import compile_to_ptx

    module = nanotile.load(path)
    mma = sorted({op.name for entry in module.entries() for op in entry.walk()
                  if op.name in MMA_OPS})
    ptx = {}
    for target in TARGETS:
        try:
            ptx[target] = compile_to_ptx(copy.deepcopy(module), target)
        except CompileError:
            ptx[target] = None
    hardware = bool(mma)
    tileiras = ""
    if mma and oracle:
        theirs = [tileiras_tensor_classes(path, t) for t in TARGETS]
        tileiras = " | ".join(theirs)
        hardware = theirs[0] != theirs[1] and "-" not in theirs
    refused = [t for t in TARGETS if ptx[t] is None]
    if refused:
        return {"mma": ",".join(mma), "status": "refused " + ",".join(refused),
                "tileiras": tileiras}
    before, after = (instruction_classes(ptx[t]) for t in TARGETS)
    classes = {c: (before[c], after[c]) for c in CLASSES if before[c] != after[c]}
    same = body(ptx["sm_90"]) == body(ptx["sm_100"])
    status = ("SAME!" if hardware else "same") if same else "differs"
    return {"mma": ",".join(mma), "status": status, "classes": classes, "tileiras": tileiras}


def has_mma(path: Path) -> bool:
    """Whether the kernel's text (the .mlir beside its bytecode) has an MMA op."""
    text = path.with_suffix(".mlir")
    return text.exists() and re.search(r"= (mmaf|mmai|mmaf_scaled) ", text.read_text()) \
        is not None


def kernels(sample: int | None, words: list[str], mma_only: bool = False) -> list[str]:
    paths = sorted((CORPUS / "cutile").glob("*.tileirbc"))
    tests = sorted((CORPUS / "cutile-tests").glob("*.tileirbc"))
    if words:
        tests = [p for p in tests if any(w in p.stem for w in words)]
    if mma_only:
        tests = [p for p in tests if has_mma(p)]
    if sample is not None and sample < len(tests):
        tests = [tests[i * len(tests) // sample] for i in range(sample)]
    return [str(p) for p in paths + tests]


def cell(classes: dict) -> str:
    return " ".join(f"{c} {a}->{b}" for c, (a, b) in classes.items())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=None,
                    help="N cutile-tests kernels, evenly over the sorted names")
    ap.add_argument("-k", dest="words", action="append", default=[])
    ap.add_argument("--timeout", type=int, default=60, help="seconds per kernel")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--all-rows", action="store_true")
    ap.add_argument("--mma", action="store_true",
                    help="only the cutile-tests kernels with an MMA op (all of them)")
    ap.add_argument("--tileiras", action="store_true",
                    help="tileiras' SASS on both targets decides where the hardware differs")
    args = ap.parse_args(argv)
    jobs = [(p, args.timeout, args.tileiras)
            for p in kernels(args.sample, args.words, args.mma)]
    print(f"{'kernel':58s} {'mma':12s} {'tileiras':16s} {'sm_90 vs sm_100':16s} "
          "classes that differ (sm_90->sm_100)")
    summary: Counter = Counter()
    with multiprocessing.Pool(args.jobs) as pool:
        for row in pool.imap(compare, jobs):
            status = row["status"].split(":")[0]
            summary[("mma" if row["mma"] else "no mma", status)] += 1
            if args.all_rows or row["mma"] or status != "same":
                print(f"{row['kernel'][:58]:58s} {row['mma'][:12]:12s} {row['tileiras']:16s} "
                      f"{row['status'][:16]:16s} {cell(row['classes'])}", flush=True)
    print(f"\n{len(jobs)} kernels")
    for (mma, status), n in sorted(summary.items()):
        print(f"  {mma:7s} {status:16s} {n}")
    flagged = summary[("mma", "SAME!")]
    print(f"hardware differs but PTX same modulo header: {flagged}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
