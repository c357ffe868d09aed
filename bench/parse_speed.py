"""Parse speed of the text format: generates a 10,000-line kernel and times parse_text.

    python bench/parse_speed.py [--lines N] [--repeat R] [--profile]

Prints a table: lines, seconds (best of R), lines per second, for parsing and printing.
The kernel is made of typical tileirdisasm lines (loads, arithmetic, constants, views)
so the mix of tokens is realistic. Times are CPU seconds (best of R): the machine is shared.

Where the time goes (measured 2026-11-22, ~52k lines/s parse, ~90k print): the tokenizer
is one regex pass plus a Token per token (~40% of the parse time, ~110k lines/s alone);
each op's format is compiled once into closures (asm_format.compile_parser and
compile_printer), so the rest of a parse is ~12 microseconds of Python per op (reading,
OpState, Operation/Value construction).
The cyclic GC is paused while parsing (it found nothing to free and cost ~30%). Types and
attribute bodies are parsed by Lark once per distinct spelling and cached, so Lark is not
on the hot path.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanotile.ir.parser import parse_modules_old, parse_text
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
    parse_modules_old(text, "warmup.mlir")  # builds the old parser's Lark grammar
    if args.profile:
        import cProfile
        import pstats

        cProfile.runctx("parse_text(text, 'bench.mlir')", globals(), locals(), "/tmp/prof")
        pstats.Stats("/tmp/prof").sort_stats("tottime").print_stats(15)
    from nanotile.ir.asm_lexer import SourceMap, tokenize

    t_lex = best(lambda: tokenize(text, SourceMap(text, "bench.mlir")), args.repeat)
    t_old = best(lambda: parse_modules_old(text, "bench.mlir"), args.repeat)
    t_new = best(lambda: parse_text(text, "bench.mlir"), args.repeat)
    module = parse_text(text, "bench.mlir")
    assert print_module(module) == print_module(parse_modules_old(text, "bench.mlir")[0])
    t_print = best(lambda: print_module(module), args.repeat)
    print(f"{'stage':20s} {'lines':>8s} {'seconds':>9s} {'lines/s':>10s}")
    for name, t in [("lex (old tokenizer)", t_lex), ("parse old", t_old),
                    ("parse new", t_new), ("print", t_print)]:
        print(f"{name:20s} {nlines:8d} {t:9.3f} {nlines / t:10.0f}")
    print(f"new / old parse speed: {t_old / t_new:.2f}x")

if __name__ == "__main__":
    main()
