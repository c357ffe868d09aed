"""Parse speed of the text format: times parse_modules on a generated kernel or the corpus.

    python bench/parse_speed.py [--lines N] [--repeat R] [--profile]
    python bench/parse_speed.py --old-tree PATH [--corpus] [--repeat R] [--rounds K]
    python bench/parse_speed.py --old-tree PATH [--corpus] --count

Without --old-tree it prints lines, seconds and lines per second for parsing and printing
a generated 10,000-line kernel of typical tileirdisasm lines (loads, arithmetic,
constants, views), so the mix of tokens is realistic.

With --old-tree PATH (a tree holding another reader, such as `git archive 0523b9b`, where
the format-engine reader is still parse_modules_old) it times that tree's reader and this
tree's side by side on the same input: the kernel, or with --corpus every `// -----`
chunk of ../shared/corpus's .mlir files that both readers accept. Each side runs in a
worker process of this script with PYTHONPATH set to its tree, measured the same way: CPU
seconds, gc.collect() before each timing, best of R; the workers alternate K rounds and
each side keeps its best, since the machine is shared.

Measured 2026-11-26 against `git archive 0523b9b` (the format-engine reader), on a shared
2-core machine (load 4; runs vary by about 10%): the kernel, new/old 1.00-1.20x; the
corpus (2017 chunks, 60k lines), 0.87-0.96x. The old reader took a whole `<...>` as one
token; the runner now takes whole types, assume predicates and constants' values as
their rules' values once read (text_lalr.WHOLE), which moved the corpus from 0.74x.
Later the same day, after fewer reductions per op (`?op`, a repetition's item appended
by the loop, `?mixed_item`) and optimization hints taken whole (load 8; 3 x 3 best-of):
the corpus 1.00x, 0.99x, 1.01x (the reader before them, measured then: 0.86x); the
kernel 1.09x. With --count (bytecode instructions per line, the same however loaded
the machine is): corpus old 1513, new 1830; kernel old 1737, new 1939. The count
overstates the new reader's share (its work is more in C: regexes, dicts) but moves
with its CPU time, so it can tell a change of 2% where seconds cannot.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

HEADER = ("entry @bench(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, "
          "%arg3: tile<ptr<f32>>) optimization_hints=<default = {}> {\n"
          "  %0 = make_token : token\n"
          "  %assume = assume div_by<16>, %arg0 : tile<ptr<f32>>\n"
          "  %assume_0 = assume bounded<0, ?>, %arg1 : tile<i32>\n"
          "  %tview = make_tensor_view %assume, shape = [%assume_0], strides = [1] : "
          "tile<i32> -> tensor_view<?xf32, strides=[1]>\n"
          "  %pview = make_partition_view %tview : partition_view<tile=(1024), "
          "tensor_view<?xf32, strides=[1]>>\n"
          "  %blockId_x, %blockId_y, %blockId_z = get_tile_block_id : tile<i32>\n"
          "  %acc = constant <f32: 0.000000e+00> : tile<1024xf32>\n")

# One block of lines; {i} makes names unique. Uses only values defined above or in it.
BLOCK = [
    ("  %tile_{i}, %tok_{i} = load_view_tko weak %pview[%blockId_x] token = %0 : "
     "partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>, tile<i32> -> "
     "tile<1024xf32>, token"),
    "  %a_{i} = addf %tile_{i}, %acc  : tile<1024xf32>",
    "  %m_{i} = mulf %a_{i}, %tile_{i} rounding<zero> : tile<1024xf32>",
    "  %c_{i} = constant <f32: 1.500000e+00> : tile<1024xf32>",
    "  %f_{i} = fma %m_{i}, %c_{i}, %a_{i}  : tile<1024xf32>",
    "  %cmp_{i} = cmpf less_than ordered %f_{i}, %c_{i} : tile<1024xf32> -> tile<1024xi1>",
    "  %s_{i} = select %cmp_{i}, %f_{i}, %c_{i} : tile<1024xi1>, tile<1024xf32>",
    "  %e_{i} = exp2 %s_{i} flush_to_zero : tile<1024xf32>",
    "  %h_{i} = ftof %e_{i}  : tile<1024xf32> -> tile<1024xf16>",
    "  %r_{i} = reshape %h_{i} : tile<1024xf16> -> tile<32x32xf16>",
]


def make_kernel(lines: int) -> str:
    out = [HEADER]
    n = HEADER.count("\n")
    i = 0
    while n < lines - 2:
        for line in BLOCK:
            out.append(line.format(i=i) + "\n")
        n += len(BLOCK)
        i += 1
    out.append("  return\n}\n")
    return "".join(out)


def corpus_chunks() -> list[str]:
    """Every `// -----` chunk of the corpus's .mlir files, in path order."""
    chunks = []
    for path in sorted(CORPUS.rglob("*.mlir")):
        text = path.read_text(errors="replace")
        chunk: list[str] = []
        for line in text.splitlines(keepends=True):
            if line.startswith("// -----"):
                chunks.append("".join(chunk))
                chunk = []
            else:
                chunk.append(line)
        chunks.append("".join(chunk))
    return [c for c in chunks if c.strip()]


def best(fn, repeat: int) -> float:
    """Best CPU time of ``repeat`` runs, the collector emptied before each."""
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def reader():
    """The tree's reader: parse_modules_old where the tree still has it, else parse_modules."""
    from nanotile.ir import parser

    return getattr(parser, "parse_modules_old", parser.parse_modules)


def instructions(fn) -> int:
    """Bytecode instructions Python runs for ``fn()`` (sys.monitoring; slow, but the same
    on a busy machine as on an idle one)."""
    monitoring, tool, count = sys.monitoring, sys.monitoring.PROFILER_ID, [0]

    def step(code, offset) -> None:
        count[0] += 1
    monitoring.use_tool_id(tool, "parse_speed")
    monitoring.register_callback(tool, monitoring.events.INSTRUCTION, step)
    monitoring.set_events(tool, monitoring.events.INSTRUCTION)
    try:
        fn()
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)
    return count[0]


def worker(inputs: Path, repeat: int, accept: bool, count: bool = False) -> None:
    """Run in a worker process: print which inputs parse (accept), the instructions one
    parse of them all takes (count), or the best time of all."""
    texts = json.loads(inputs.read_text())
    parse = reader()
    if accept:
        ok = []
        for i, text in enumerate(texts):
            try:
                parse(text, "chunk.mlir")
                ok.append(i)
            except Exception:  # noqa: BLE001 - a chunk either reader refuses is left out
                pass
        print(json.dumps(ok))
        return

    def parse_all() -> None:
        for text in texts:
            parse(text, "bench.mlir")

    parse_all()  # loads the tables, fills the caches
    print(json.dumps(instructions(parse_all) if count else best(parse_all, repeat)))


def run_worker(tree: Path, inputs: Path, repeat: int, accept: bool = False,
               count: bool = False):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(inputs),
           "--repeat", str(repeat)] + (["--accept"] if accept else []) + (
               ["--count"] if count else [])
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def side_by_side(old_tree: Path, texts: list[str], label: str, repeat: int,
                 rounds: int, count: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inputs = Path(tmp) / "inputs.json"
        inputs.write_text(json.dumps(texts))
        both = set(run_worker(old_tree, inputs, 1, accept=True))
        both &= set(run_worker(ROOT, inputs, 1, accept=True))
        texts = [texts[i] for i in sorted(both)]
        inputs.write_text(json.dumps(texts))
        if count:
            n_old, n_new = (run_worker(tree, inputs, 1, count=True) for tree in (old_tree, ROOT))
            nlines = sum(t.count("\n") for t in texts)
            print(f"{label}: {len(texts)} inputs, {nlines} lines; bytecode instructions per "
                  f"line: old {n_old / nlines:.0f}, new {n_new / nlines:.0f} "
                  f"(new / old {n_new / n_old:.2f})")
            return
        t_old = t_new = float("inf")
        for _ in range(rounds):
            t_old = min(t_old, run_worker(old_tree, inputs, repeat))
            t_new = min(t_new, run_worker(ROOT, inputs, repeat))
    nlines = sum(t.count("\n") for t in texts)
    print(f"{label}: {len(texts)} inputs both readers accept, {nlines} lines; "
          f"CPU seconds, best of {repeat} x {rounds} rounds")
    print(f"{'reader':10s} {'seconds':>9s} {'lines/s':>10s}")
    print(f"{'old':10s} {t_old:9.3f} {nlines / t_old:10.0f}   ({old_tree})")
    print(f"{'new':10s} {t_new:9.3f} {nlines / t_new:10.0f}   ({ROOT})")
    print(f"new / old parse speed: {t_old / t_new:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--old-tree", type=Path, help="time this tree's reader beside ours")
    ap.add_argument("--corpus", action="store_true", help="the corpus's chunks, not the kernel")
    ap.add_argument("--count", action="store_true",
                    help="with --old-tree: count bytecode instructions, not seconds")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--accept", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.repeat, args.accept, args.count)
        return
    if args.old_tree:
        texts, label = (corpus_chunks(), "corpus") if args.corpus else (
            [make_kernel(args.lines)], "kernel")
        side_by_side(args.old_tree.resolve(), texts, label, args.repeat, args.rounds,
                     args.count)
        return
    sys.path.insert(0, str(ROOT))
    from nanotile.ir.parser import parse_text
    from nanotile.ir.printer import print_module

    text = make_kernel(args.lines)
    nlines = text.count("\n")
    parse_text(text, "warmup.mlir")  # loads the LALR tables, fills the caches
    if args.profile:
        import cProfile
        import pstats

        cProfile.runctx("parse_text(text, 'bench.mlir')", globals(), locals(), "/tmp/prof")
        pstats.Stats("/tmp/prof").sort_stats("tottime").print_stats(15)
    t_parse = best(lambda: parse_text(text, "bench.mlir"), args.repeat)
    module = parse_text(text, "bench.mlir")
    t_print = best(lambda: print_module(module), args.repeat)
    print(f"{'stage':8s} {'lines':>8s} {'seconds':>9s} {'lines/s':>10s}")
    print(f"{'parse':8s} {nlines:8d} {t_parse:9.3f} {nlines / t_parse:10.0f}")
    print(f"{'print':8s} {nlines:8d} {t_print:9.3f} {nlines / t_print:10.0f}")


if __name__ == "__main__":
    main()
