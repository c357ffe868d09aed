"""Issue 9 sweep: every corpus/cutile-tests kernel that nanotile compiles for a target runs
in the PTX emulator and matches the interpreter on the same random inputs
(nanotile.passes.semantics.make_inputs). Each (kernel, target) is classified:

    match        the emulated run's outputs match the interpreter's
                 (nanotile.compare: ints exact, floats to a few ulps, printed
                 text equal up to the order of tile blocks)
    order        they differ, but the kernel's outputs depend on a float reduce/scan and
                 the interpreter folding it in the spec's sequential order (the order the
                 back end uses) matches: "match (reduction order)", not a bug
    tensor       they differ, but the kernel has a float mmaf and the interpreter summing it
                 as the tensor cores do (nanotile.compare.tensor_cores_explain: truncating
                 sums measured on an H200) matches: "match(tc)", not a bug
    race         they differ, but the emulator running one CTA at a time in order matches:
                 tile blocks update the same elements non-atomically (not a bug)
    mismatch     they differ (first differing argument shown)
    unsupported  the emulator has no implementation of an instruction nanotile emitted
    emu-error    another emulator error (memory fault, trap, deadlock, parse error)
    interp-cant  the interpreter cannot run the kernel on the generated inputs
    refused      nanotile does not compile the kernel for that target
    timeout      the kernel took longer than --timeout seconds (per file)
    crash        an unexpected Python exception (a bug somewhere)

A kernel that the interpreter finds never ends on the generated grid (a tile block enters
a loop whose every exit is under a condition, fixed before the loop, that skips it: a
kernel written for one tile block) is compared on one tile block instead; its row says
so ("on one tile block").

Two worker processes; a summary table per target and the list of non-matching kernels.

    python bench/emulator_sweep.py [--limit N] [--target sm_90|sm_100] [--timeout 20]
                                   [-k SUBSTRING ...] [--names FILE] [NAME ...]

-k keeps the files whose name contains one of the substrings; --names FILE and NAME keep
the files named (stems, one per line in FILE; '#' starts a comment).
"""

from __future__ import annotations

import argparse
import copy
import io
import multiprocessing
import signal
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / ".." / "shared" / "corpus" / "cutile-tests"
TARGETS = ["sm_90", "sm_100"]
KINDS = ["match", "order", "tensor", "race", "mismatch", "unsupported", "emu-error",
         "interp-cant", "refused", "timeout", "crash"]


class _Timeout(BaseException):  # not caught by the interpreter's "except Exception"
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:200]


def check_file(job: tuple[str, list[str], int]) -> list[tuple[str, str, str, str]]:
    """(file stem, target, kind, reason) for each target of one corpus file."""
    path, targets, timeout = job
    stem = Path(path).stem
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    results: dict[str, tuple[str, str]] = {}
    try:
        results = _check(path, targets)
    except _Timeout:
        pass
    except Exception as e:  # noqa: BLE001 - the sweep classifies every failure
        for t in targets:
            results.setdefault(t, ("crash", f"{type(e).__name__}: {_one_line(e)}"))
    finally:
        signal.alarm(0)
    return [(stem, t, *results.get(t, ("timeout", f"over {timeout} s"))) for t in targets]


def _check(path: str, targets: list[str]) -> dict[str, tuple[str, str]]:
    import numpy as np

    import nanotile
    from nanotile.compare import PrintLog
    from nanotile.diagnostics import CompileError
    from nanotile.interp import InterpError, NeverEnds
    from nanotile.ir.array_list import copy_arguments
    from nanotile.passes.semantics import make_inputs
    from nanotile.targets.compile import compile_to_ptx

    results: dict[str, tuple[str, str]] = {}
    module = nanotile.load(path)
    (entry,) = module.entries()
    kernel = entry.attributes["sym_name"]
    ptx: dict[str, str] = {}
    for t in targets:
        try:
            ptx[t] = compile_to_ptx(copy.deepcopy(module), t)  # it rewrites the IR in place
        except CompileError as e:
            results[t] = ("refused", _one_line(e))
    if not ptx:
        return results
    grid, args = make_inputs(entry, np.random.default_rng(0))

    def copy_args() -> list:
        return copy_arguments(args)

    note = ""
    try:
        try:
            want, printed = copy_args(), PrintLog()
            nanotile.run(module, kernel, grid, *want, out=printed)
        except NeverEnds as e:
            if tuple(grid) == (1, 1, 1):
                raise
            note = f"on one tile block (grid {tuple(grid)}: {e})"
            grid = (1, 1, 1)
            want, printed = copy_args(), PrintLog()
            nanotile.run(module, kernel, grid, *want, out=printed)
    except InterpError as e:
        for t in ptx:
            results[t] = ("interp-cant", _one_line(f"{note}: {e}" if note else e))
        return results
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    for t, text in ptx.items():
        kind, reason = _compare(module, kernel, t, text, dims, args, want, printed)
        if note:
            reason = _one_line(f"{note}; {reason}" if reason else note)
        results[t] = (kind, reason)
    return results


def _compare(module, kernel: str, t: str, text: str, dims: tuple, args: list, want: list,
             printed) -> tuple[str, str]:
    """(kind, reason) for target ``t``'s PTX run in the emulator against the interpreter's
    results ``want`` and printed text ``printed``."""
    from nanotile.compare import (PrintLog, first_difference, order_explains, print_difference,
                                  tensor_cores_explain)
    from nanotile.ir.array_list import copy_arguments
    from nanotile.ptxemu import run_ptx
    from nanotile.ptxemu.errors import PtxError
    from nanotile.ptxemu.printf import printf_output

    got = copy_arguments(args)
    log = PrintLog()
    try:
        with printf_output(log):
            run_ptx(text, kernel, grid=dims, args=got, filename=f"<{kernel}.{t}.ptx>")
    except PtxError as e:
        kind = "unsupported" if "unsupported instruction" in str(e) else "emu-error"
        return kind, _one_line(e.message)
    diff = print_difference(log, printed, t)
    if diff is not None:
        return "mismatch", _one_line(diff)
    diff = first_difference(got, want, t)
    if diff is not None and order_explains(module, kernel, dims, args, got, t):
        return "order", _one_line(diff)
    if diff is not None and tensor_cores_explain(module, kernel, dims, args, got, t):
        return "tensor", _one_line(diff)
    if diff is not None and _in_order_matches(text, kernel, dims, copy_arguments(args), want,
                                              t):
        return "race", _one_line(diff)
    return ("match", "") if diff is None else ("mismatch", _one_line(diff))


def _in_order_matches(ptx: str, kernel: str, dims: tuple, got: list, want: list,
                      target: str) -> bool:
    """Whether the emulator, running one CTA at a time in order (batch=False) as the
    interpreter runs tile blocks, matches the interpreter: then the mismatch comes from
    tile blocks updating the same elements without atomics (a race), not from a bug."""
    from nanotile.compare import first_difference
    from nanotile.ptxemu import run_ptx
    from nanotile.ptxemu.printf import printf_output

    with printf_output(io.StringIO()):  # the text was compared already
        run_ptx(ptx, kernel, grid=dims, args=got, filename=f"<{kernel}.{target}.ptx>",
                batch=False)
    return first_difference(got, want, target) is None


def names_of(path: Path | None, names: list[str]) -> set[str] | None:
    """The stems named on the command line and in ``path`` (None: no name filter)."""
    if path is None and not names:
        return None
    wanted = {n.removesuffix(".tileirbc") for n in names}
    if path is not None:
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                wanted.add(line.removesuffix(".tileirbc"))
    return wanted


def select_files(paths: list[Path], substrings: list[str],
                 names: set[str] | None) -> list[str]:
    return [str(p) for p in paths
            if (not substrings or any(s in p.stem for s in substrings))
            and (names is None or p.stem in names)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="first N files (sorted)")
    ap.add_argument("--target", choices=TARGETS, action="append",
                    help="target(s) to check (default: both)")
    ap.add_argument("--timeout", type=int, default=20, help="seconds per file")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("-k", dest="substrings", action="append", default=[],
                    help="only files whose name contains this (repeatable)")
    ap.add_argument("--names", type=Path, help="only the files named in this file")
    ap.add_argument("name", nargs="*", help="only these files (stems)")
    opts = ap.parse_args(argv)
    targets = opts.target or TARGETS
    files = select_files(sorted(CORPUS.glob("*.tileirbc")), opts.substrings,
                         names_of(opts.names, opts.name))[:opts.limit]
    if not files:
        print("no corpus file selected", file=sys.stderr)
        return 2
    start = time.time()
    rows: list[tuple[str, str, str, str]] = []
    with multiprocessing.Pool(opts.jobs, maxtasksperchild=50) as pool:
        jobs = [(f, targets, opts.timeout) for f in files]
        for n, res in enumerate(pool.imap_unordered(check_file, jobs), 1):
            rows.extend(res)
            for stem, t, kind, reason in res:
                if kind != "match" or reason:
                    print(f"[{n}/{len(files)}] {kind:11} {t:6} {stem}: {reason}", flush=True)
    counts = Counter((t, kind) for _, t, kind, _ in rows)
    print(f"\n{len(files)} files, {time.time() - start:.0f} s")
    print(f"{'kind':12}" + "".join(f"{t:>8}" for t in targets))
    for kind in KINDS:
        # matches in the fold order / with mmaf summed as the tensor cores sum
        label = {"order": "match(order)", "tensor": "match(tc)"}.get(kind, kind)
        print(f"{label:12}" + "".join(f"{counts[(t, kind)]:8}" for t in targets))
    print(f"{'total':12}" + "".join(
        f"{sum(counts[(t, k)] for k in KINDS):8}" for t in targets))
    reasons = Counter((kind, reason.split("'")[1] if kind == "unsupported" and "'" in reason
                       else "") for _, _, kind, reason in rows if kind == "unsupported")
    if reasons:
        print("\nunsupported instructions:")
        for (_, op), c in reasons.most_common():
            print(f"  {c:5}  {op}")
    noted = sorted(row for row in rows if row[2] == "match" and row[3])
    if noted:
        print("\nmatching, with a note:")
        for stem, t, kind, reason in noted:
            print(f"  {kind:11} {t:6} {stem}: {reason}")
    print("\nnon-matching (excluding 'refused'):")
    for stem, t, kind, reason in sorted(rows):
        if kind not in ("match", "refused"):
            print(f"  {kind:11} {t:6} {stem}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
