"""Issue 14: assign-layouts' layout e-graph (strategy=eqsat) against the greedy rule
(strategy=greedy), side by side, per kernel and target:

    conv     convert_layout ops left for lower-convert-layout (after
             remove-layout-conversions: the conversions the kernel pays); those into
             or out of shared memory (an op that reads its operand there: print, scan,
             an MMA operand; one that leaves its result there: an atomic's old value)
             no layout choice removes, so the summary also counts the kernels where
             greedy converts between register layouts and what eqsat does there;
             and of those, the kernels where greedy converts more than its
             reductions must (reduction_exchanges: a reduce to fewer elements than
             the CTA has warps gathers the warps' partials, whatever the layouts)
    shared   bytes those conversions move through shared memory
    ptx      PTX instructions
    warp     warp instructions the PTX emulator executes (make_inputs' random inputs;
             by default only for kernels whose PTX eqsat changed: "-" where the PTX is
             the same, so the totals are over the changed kernels)
    layout   milliseconds of layout saturation + extraction, and its share of the
             pipeline; pipeline: the whole pipeline's seconds

then the totals, the kernels where eqsat is strictly better (fewer conversions or shared
bytes, nothing else worse), and any where it is worse. With --tileiras, the kernels where
eqsat converts as much as greedy are compiled by tileiras too, and those whose SASS moves
no data between threads (no shuffle, shared memory access or TMA copy) are listed: there
NVIDIA's compiler needs no conversion, so the choice (or the lowering) is to look at.
For kernels whose PTX changed it also checks that ptxas accepts eqsat's PTX and that
the emulator matches the interpreter (nanotile.compare, as bench/emulator_sweep.py).

With --before REV (a git revision from before the layout e-graph: 9f78f18 is main just
before it merged, whose only strategy was the greedy rule), that revision is checked out
into a temporary worktree and a worker process whose import path starts there runs its
whole pipeline on each kernel right after this tree's two runs (the same repeats, the
fastest kept): the summary then sets today's pipeline, both strategies, beside that
revision's, over the kernels both compile.

    .venv/bin/python bench/layout_choice.py [--corpus cutile|cutile-tests] [--sample N]
        [--every N --start K]
        [--targets sm_90,sm_100] [--emulate all|changed|none] [--timeout 60] [--repeat 3]
        [-k SUBSTRING] [--tileiras] [--before REV]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import io
import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = (ROOT / ".." / "shared" / "corpus").resolve()
STATS = re.compile(r"saturation ([\d.]+) ms, extraction ([\d.]+) ms")


def compile_kernel(path: Path, gpu: str, strategy: str) -> dict:
    """One compilation: the metrics above but the emulator's."""
    import nanotile
    from nanotile.ir.layouts import SharedLayout
    from nanotile.ir.rewrite import all_ops
    from nanotile.passes.base import PassContext
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets.ptx.shared_memory import element_bytes

    module = nanotile.load(str(path))
    ctx = PassContext.from_module(module)
    row = {"seconds": 0.0, "layout_ms": 0.0}
    log = io.StringIO()
    for step in parse_pipeline(default_pipeline(gpu)):
        if step.name == "assign-layouts":
            step = dataclasses.replace(step, strategy=strategy, stats=True)
        start = time.perf_counter()
        with contextlib.redirect_stderr(log):
            step.apply(module, ctx)
        row["seconds"] += time.perf_counter() - start
        if step.name == "assign-layouts":
            row["exchanges"] = reduction_exchanges(module)
        if step.name == "remove-layout-conversions":
            conversions = [op for op in all_ops(module) if op.name == "convert_layout"]
            row["conv"] = len(conversions)
            # into or out of shared memory: the user reads its operand from there (print,
            # scan, an MMA's operand...) or the producer leaves its result there (an
            # atomic's old value, broadcast to every thread) whatever the layouts, so no
            # choice of register layouts removes these
            row["to_shared"] = sum(isinstance(op.results[0].type.layout, SharedLayout) or
                                   isinstance(op.operands[0].type.layout, SharedLayout)
                                   for op in conversions)
        if step.name == "lower-convert-layout":
            row["shared"] = sum(op.results[0].type.num_elements *
                                element_bytes(op.results[0].type.element)
                                for op in all_ops(module) if op.name == "convert_layout"
                                and isinstance(op.results[0].type.layout, SharedLayout)
                                and not isinstance(op.operands[0].type.layout, SharedLayout))
    for found in STATS.finditer(log.getvalue()):
        row["layout_ms"] += float(found.group(1)) + float(found.group(2))
    text = module.ptx.render()
    row["ptx_text"] = text
    row["ptx"] = sum(1 for line in text.splitlines() if line.startswith("\t") and
                     line.rstrip().endswith(";") and not line.lstrip().startswith((".", "//")))
    return row


def reduction_exchanges(module) -> int:
    """The conversions a kernel's reductions make whatever the layouts: a reduce whose
    result has fewer elements than the CTA has warps leaves the warps holding parts of
    one result (unless every warp loads and reduces all of it again), so lower-reductions
    gathers their partials, one convert_layout per result, through shared memory."""
    from nanotile.targets.target import entry_warps

    return sum(len(op.results) for entry in module.entries() for op in entry.walk()
               if op.name == "reduce" and op.results[0].type.num_elements < entry_warps(entry))


def emulate(path: Path, ptx: str, check: bool) -> tuple[int, str]:
    """Warp instructions of the emulated run, and "match"/"mismatch ..." against the
    interpreter when ``check``."""
    import numpy as np

    import nanotile
    from nanotile.compare import first_difference, order_explains
    from nanotile.passes.semantics import make_inputs
    from nanotile.ptxemu import run_ptx

    module = nanotile.load(str(path))
    (entry,) = module.entries()
    kernel = entry.attributes["sym_name"]
    grid, args = make_inputs(entry, np.random.default_rng(0))
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    got = copy.deepcopy(args)
    stats = run_ptx(ptx, kernel, grid=dims, args=got)
    if not check:
        return stats.instructions, ""
    want = copy.deepcopy(args)
    nanotile.run(module, kernel, grid, *want)
    diff = first_difference(got, want, "eqsat")
    if diff is not None and order_explains(module, kernel, dims, args, got, "eqsat"):
        diff = None
    return stats.instructions, "match" if diff is None else f"mismatch {diff}"[:120]


def measure(path: Path, gpu: str, emulated: str, repeat: int) -> dict:
    from nanotile.targets.compile import assemble

    rows = {s: compile_kernel(path, gpu, s) for s in ("greedy", "eqsat")}
    for _ in range(repeat - 1):  # the machine is shared: the fastest of the runs
        for s, row in rows.items():
            again = compile_kernel(path, gpu, s)
            row["seconds"] = min(row["seconds"], again["seconds"])
            row["layout_ms"] = min(row["layout_ms"], again["layout_ms"])
    changed = rows["eqsat"]["ptx_text"] != rows["greedy"]["ptx_text"]
    result = {"changed": changed}
    if changed:
        assemble(rows["eqsat"]["ptx_text"], gpu)  # raises when ptxas refuses it
        result["ptxas"] = "ok"
    for strategy, row in rows.items():
        # the same PTX runs the same instructions: only a changed kernel runs twice
        if emulated == "all" or (emulated == "changed" and changed):
            check = changed and strategy == "eqsat"
            row["warp"], verdict = emulate(path, row["ptx_text"], check)
            if check:
                result["verdict"] = verdict
        del row["ptx_text"]
        result[strategy] = row
    return result


def _alarm(signum, frame):
    raise TimeoutError("timeout")


def kernels(args: argparse.Namespace) -> list[Path]:
    files = sorted((CORPUS / args.corpus).glob("*.tileirbc"))
    files = [f for f in files if not args.k or any(k in f.name for k in args.k)]
    if args.every:  # another sample: every N-th file from --start
        files = files[args.start::args.every]
    if args.sample and len(files) > args.sample:
        step = len(files) / args.sample
        files = [files[int(i * step)] for i in range(args.sample)]
    return files


METRICS = ("conv", "shared", "ptx", "warp")

# The worker of --before, run by the Python of this bench with the other checkout first on
# its import path: a line "PATH GPU REPEAT TIMEOUT" in, the fastest of REPEAT runs of that
# checkout's default pipeline out (one JSON number; null where it refuses the kernel or
# the runs take over TIMEOUT seconds).
BEFORE_WORKER = r"""
import json, signal, sys, time
sys.path.insert(0, sys.argv[1])
import nanotile, nanotile.targets
from nanotile.passes.base import PassContext
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline
def alarm(signum, frame):
    raise TimeoutError
signal.signal(signal.SIGALRM, alarm)
for line in sys.stdin:
    path, gpu, repeat, timeout = line.split()
    best = None
    signal.alarm(int(timeout))
    try:
        for _ in range(int(repeat)):
            module = nanotile.load(path)
            ctx = PassContext.from_module(module)
            steps = parse_pipeline(default_pipeline(gpu))
            start = time.perf_counter()
            for step in steps:
                step.apply(module, ctx)
            seconds = time.perf_counter() - start
            best = seconds if best is None else min(best, seconds)
    except Exception:  # a kernel that revision refuses is left out of the comparison
        best = None
    signal.alarm(0)
    print(json.dumps(best), flush=True)
"""


class Before:
    """The pipeline of another revision, timed by a worker in a worktree of it. The
    worker is started again every RESTART kernels: a process of an older revision may
    slow down as it compiles kernel after kernel (9f78f18's took two to three times as
    long on a small kernel after a few hundred others), which a compile from the
    command line, a kernel a process, never sees."""

    RESTART = 20

    def __init__(self, revision: str, folder: Path) -> None:
        self.revision = revision
        self.tree = folder / "before"
        added = subprocess.run(["git", "worktree", "add", "--detach", str(self.tree),
                                revision], cwd=ROOT, capture_output=True, text=True)
        if added.returncode != 0:  # not a revision of this repository
            lines = added.stderr.strip().splitlines() or ["git worktree add failed"]
            sys.exit(f"layout_choice.py: --before {revision}: {lines[-1]}")
        self.worker: subprocess.Popen | None = None
        self.asked = 0

    def seconds(self, path: Path, gpu: str, repeat: int, timeout: int) -> float | None:
        if self.worker is None or self.asked % self.RESTART == 0:
            self.stop_worker()
            self.worker = subprocess.Popen(
                [sys.executable, "-c", BEFORE_WORKER, str(self.tree)], cwd=self.tree,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.asked += 1
        self.worker.stdin.write(f"{path} {gpu} {repeat} {timeout}\n")
        self.worker.stdin.flush()
        return json.loads(self.worker.stdout.readline())

    def stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.stdin.close()
            self.worker.wait()
            self.worker = None

    def close(self) -> None:
        self.stop_worker()
        subprocess.run(["git", "worktree", "remove", "--force", str(self.tree)], cwd=ROOT,
                       check=False, capture_output=True)


def avoidable(row: dict) -> bool:
    """The row converts between register layouts beyond its reductions' exchanges."""
    return row["conv"] - row["to_shared"] > row.get("exchanges", 0)


EXCHANGES = re.compile(r"\b(SHFL|STS|LDS|STSM|LDSM|UTMALDG|UTMASTG)\b")


def tileiras_exchanges(path: Path, gpu: str) -> set[str] | None:
    """The SASS instructions of tileiras' cubin for ``path`` that move data between
    threads (shuffles, shared memory, TMA); None where tileiras refuses it."""
    import subprocess
    import tempfile

    from nanotile.targets.compile import ptxas_path

    tools = ptxas_path().parent
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        made = subprocess.run([str(tools / "tileiras"), f"--gpu-name={gpu}", str(path),
                               "-o", str(cubin)], capture_output=True)
        if made.returncode != 0 or not cubin.exists():
            return None
        sass = subprocess.run([str(tools / "cuobjdump"), "-sass", str(cubin)],
                              capture_output=True, text=True, check=True).stdout
    return set(EXCHANGES.findall(sass))


def report_tileiras(kept: list[tuple[str, str]], corpus: str) -> None:
    """Where eqsat converts as much as greedy: does tileiras move data between threads
    there too (its SASS)? Those where it does not are the choices to look at."""
    alone = []
    for name, gpu in kept:
        found = tileiras_exchanges(CORPUS / corpus / f"{name}.tileirbc", gpu)
        if not found:
            alone.append((name, gpu, "refused" if found is None else "none"))
    print(f"  of those, tileiras' SASS moves data between threads (shuffles, shared "
          f"memory or TMA) on {len(kept) - len(alone)}, not on {len(alone)}:")
    for name, gpu, why in alone:
        print(f"    {gpu} {name} ({why})")


def report(rows: list[tuple[str, str, dict]], tileiras: bool = False,
           corpus: str = "cutile", revision: str | None = None) -> int:
    totals = {(gpu, s): dict.fromkeys((*METRICS, "seconds", "layout_ms"), 0.0)
              for _, gpu, _ in rows for s in ("greedy", "eqsat")}
    better, worse, over = [], [], []
    registers_kept = []  # greedy converts between register layouts; eqsat no fewer
    for name, gpu, r in rows:
        for s in ("greedy", "eqsat"):
            for m in totals[(gpu, s)]:
                totals[(gpu, s)][m] += r[s].get(m, 0)
        g, e = r["greedy"], r["eqsat"]
        if any(e.get(m, 0) > g.get(m, 0) for m in METRICS):
            worse.append((name, gpu))
        elif any(e.get(m, 0) < g.get(m, 0) for m in ("conv", "shared")):
            better.append((name, gpu))
        elif avoidable(g):
            registers_kept.append((name, gpu))
        if e["seconds"] and e["layout_ms"] / 1000 > 0.25 * e["seconds"]:
            over.append((name, gpu, e["layout_ms"] / 1000 / e["seconds"]))
    print("\ntotals        " + "".join(f"{m:>22}" for m in (*METRICS, "seconds", "layout_ms")))
    for (gpu, s), t in sorted(totals.items()):
        print(f"{gpu:6} {s:6} " + "".join(f"{t[m]:>22.2f}" for m in t))
    print(f"\neqsat strictly better on {len(better)}:")
    for name, gpu in better:
        print(f"  {gpu} {name}")
    paying = [(n, g) for n, g, r in rows if r["greedy"]["conv"] > r["greedy"]["to_shared"]]
    print(f"greedy converts between register layouts on {len(paying)}, beyond its "
          f"reductions' exchanges between warps on "
          f"{sum(avoidable(r['greedy']) for _, _, r in rows)}; there eqsat converts "
          f"fewer or moves fewer bytes on "
          f"{sum(avoidable(r['greedy']) for n, g, r in rows if (n, g) in better)}, "
          f"the same on {len(registers_kept)}:")
    for name, gpu in registers_kept:
        print(f"  {gpu} {name}")
    if tileiras:
        report_tileiras(registers_kept, corpus)
    print(f"eqsat worse on {len(worse)}: {worse}")
    print(f"layout time > 25% of the pipeline on {len(over)}: {over}")
    if revision:
        report_before(rows, revision)
    return 1 if worse else 0


def report_before(rows: list[tuple[str, str, dict]], revision: str) -> None:
    """Today's pipeline beside that of ``revision``, over the kernels both compile."""
    print(f"\nthe whole pipeline, seconds (fastest of the repeats), beside {revision}'s:")
    for gpu in sorted({gpu for _, gpu, _ in rows}):
        both = [(name, r) for name, g, r in rows if g == gpu and r.get("before")]
        left_out = sum(1 for _, g, r in rows if g == gpu and not r.get("before"))
        if left_out:
            print(f"  {gpu}: {left_out} kernels {revision} refuses or takes over "
                  f"--timeout on, left out")
        if not both:
            continue
        then = sum(r["before"] for _, r in both)
        eqsat = sum(r["eqsat"]["seconds"] for _, r in both)
        greedy = sum(r["greedy"]["seconds"] for _, r in both)
        ratios = sorted((r["eqsat"]["seconds"] / r["before"], name) for name, r in both)
        print(f"  {gpu}: {len(both)} kernels; {revision} {then:.2f}, eqsat {eqsat:.2f} "
              f"({eqsat / then:.2f}x), greedy {greedy:.2f} ({greedy / then:.2f}x); eqsat "
              f"per kernel: median {statistics.median(x for x, _ in ratios):.2f}x, "
              f"slowest {ratios[-1][0]:.2f}x ({ratios[-1][1]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="cutile", choices=("cutile", "cutile-tests"))
    parser.add_argument("--sample", type=int, default=0,
                        help="this many kernels, evenly spread over the corpus")
    parser.add_argument("--every", type=int, default=0,
                        help="every N-th kernel from --start (another sample)")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--targets", default="sm_90,sm_100")
    parser.add_argument("--emulate", default="changed", choices=("all", "changed", "none"),
                        help="run the emulator on every kernel, on those whose PTX eqsat "
                             "changed (the default: the same PTX runs the same "
                             "instructions), or on none")
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("-k", action="append", default=[])
    parser.add_argument("--tileiras", action="store_true",
                        help="where eqsat converts as much as greedy, ask tileiras' SASS "
                             "whether NVIDIA's compiler moves data between threads there")
    parser.add_argument("--repeat", type=int, default=3,
                        help="compile each kernel this many times; times are the fastest")
    parser.add_argument("--before", metavar="REV",
                        help="time this git revision's pipeline on the same kernels too")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    # a bench stopped by kill still removes --before's worktree (the finally below)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    with tempfile.TemporaryDirectory() as folder:
        before = Before(args.before, Path(folder)) if args.before else None
        try:
            rows = measure_all(args, before)
        finally:
            if before is not None:
                before.close()
    return report(rows, args.tileiras, args.corpus, args.before)


def measure_all(args: argparse.Namespace, before: Before | None) -> list:
    rows = []
    print(f"{'kernel':60} gpu    " + "".join(f"{m:>16}" for m in METRICS) +
          "  layout  pipeline")
    for path in kernels(args):
        for gpu in args.targets.split(","):
            signal.alarm(args.timeout)
            try:
                r = measure(path, gpu, args.emulate, args.repeat)
            except Exception as e:  # refused, a timeout, ptxas: a row of its own
                print(f"{path.stem[:60]:60} {gpu:6} skipped: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:80] if str(e) else ''}", flush=True)
                continue
            finally:
                signal.alarm(0)
            if before is not None:  # outside the alarm: the worker answers every line
                r["before"] = before.seconds(path, gpu, args.repeat, args.timeout)
            rows.append((path.stem, gpu, r))
            g, e = r["greedy"], r["eqsat"]
            cells = "".join(f"{g.get(m, '-'):>7}/{e.get(m, '-'):<8}" for m in METRICS)
            share = e["layout_ms"] / 1000 / e["seconds"] if e["seconds"] else 0
            mark = f"  {r.get('verdict', '')} ptxas={r.get('ptxas', '-')}" if r["changed"] \
                else ""
            then = f" ({args.before} {r['before']:.2f}s)" if r.get("before") else ""
            print(f"{path.stem[:60]:60} {gpu:6} {cells} {share:6.1%} "
                  f"{g['seconds']:.2f}/{e['seconds']:.2f}s{then}{mark}", flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(main())
