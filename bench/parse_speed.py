"""Parse speed of the text format: generates a 10,000-line kernel and times parse_text.

    python bench/parse_speed.py [--lines N] [--repeat R] [--profile]

Prints a table: lines, seconds (best of R), lines per second, for parsing and printing.
The kernel is made of typical tileirdisasm lines (loads, arithmetic, constants, views)
so the mix of tokens is realistic. Times are CPU seconds (best of R): the machine is shared.

Where the time goes (2026-11-25): the parser is nanotile/grammar.lark run by
text_lalr.LalrRunner. About 60% of a parse is that loop (each state's contextual-lexer
regex, then the LALR shifts and reductions; a type spelled before comes back as one
CACHED_TYPE token); the rest is text_reader's callbacks building Operations and Values
(ops of the common shape in one step each). The cyclic GC is paused while parsing.

Old (format-engine reader) vs new (grammar), measured 2026-11-25 with both in the tree
(commit 0523b9b, `parse old` / `parse new` rows of this script; CPU seconds, best of 7
to 15, on a shared 2-core machine where runs vary by +-10%):

    this kernel, six runs:  old 40-42k lines/s   new 40-49k lines/s   new/old 0.97-1.21x
                            (median 1.07x); the old tokenizer alone ran at 71-78k lines/s
    the corpus (../shared/corpus, each `// -----` chunk both read: 2019 chunks, 62k
    lines; old and new interleaved, best of 5), two runs:
                            old 47-48k lines/s   new 37-41k lines/s   new/old 0.79-0.85x

On the corpus the old reader was faster: its tokenizer took a whole `<...>` (a
predicate such as `div_by<16>`, a constant's `<i32: 1>`) as one token and parsed each
spelling once, where the grammar reads them token by token; types are cached by both.
The old reader was then deleted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module

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


def best(fn, repeat: int) -> float:
    """Best CPU time of ``repeat`` runs (CPU time: the machine is shared)."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
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
