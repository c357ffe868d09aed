"""How compile time and memory grow with program size: a synthetic kernel of N chained
elementwise ops on 1024xf32 tiles (addf/mulf/subf of the running value and one of two
loaded tiles, so that no rule folds the chain away), compiled for a target stage by stage
in a fresh process per N (after compiling a 2-op chain, so that imports and one-time set-up
are not counted). For each stage: CPU seconds and the peak resident memory of
the process when the stage ends (egglog's Rust memory included), then the scaling
exponent k of time ~ N^k fitted over the sizes (least squares on log-log), which the
goals want near 1 (<= 1.1) for the PTX passes and eqsat.

    .venv/bin/python bench/scaling_bench.py [--sizes 100,300,1000,3000,10000] [--gpu-name sm_90]

Stages: parse (text), verify, canonicalize (the tile-canon passes), eqsat, lower (views,
tokens, layouts, shared memory, select-instructions: the back end's lowering, measured but not
a goal of the PTX passes), ptx passes, emit (PTX text).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGES = ["parse", "verify", "canonicalize", "eqsat", "lower", "ptx passes", "emit"]


def chain_kernel(n: int) -> str:
    """Tile IR text: load x and y (1024xf32), n ops in a chain, store the last value."""
    tile = "tile<1024xf32>"
    view = "partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>"
    lines = [("entry @chain(%x_ptr: tile<ptr<f32>>, %y_ptr: tile<ptr<f32>>, "
             "%out_ptr: tile<ptr<f32>>, %n: tile<i32>) {"),
             "  %tok = make_token : token",
             "  %bid, %bid_y, %bid_z = get_tile_block_id : tile<i32>"]
    for name in ("x", "y", "out"):
        lines.append(f"  %{name}_view = make_tensor_view %{name}_ptr, shape = [%n], "
                     "strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>")
        lines.append(f"  %{name}_part = make_partition_view %{name}_view : {view}")
    for name in ("x", "y"):
        lines.append(f"  %{name}, %{name}_tok = load_view_tko weak %{name}_part[%bid] "
                     f"token = %tok : {view}, tile<i32> -> {tile}, token")
    previous = "%x"
    for k in range(n):
        op = ("addf", "mulf", "subf")[k % 3]
        other = "%y" if k % 2 else "%x"
        lines.append(f"  %v{k} = {op} {previous}, {other} : {tile}")
        previous = f"%v{k}"
    lines.append(f"  %done = store_view_tko weak {previous}, %out_part[%bid] token = %tok : "
                 f"{tile}, {view}, tile<i32> -> token")
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def measure(n: int, gpu: str) -> dict[str, tuple[float, float]]:
    """In this process: (CPU seconds, peak RSS in MB at its end) per stage."""
    import resource
    import time

    sys.path.insert(0, str(ROOT))
    import nanotile.targets  # noqa: F401
    from nanotile.ir.parser import parse_text
    from nanotile.passes.base import PassContext
    from nanotile.passes.languages import get_language
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    def compile_all(text: str) -> None:
        module = parse_text(text, "warm-up.mlir")
        for step in parse_pipeline(default_pipeline(gpu)):
            step.apply(module, PassContext())

    compile_all(chain_kernel(2))  # imports and caches: the stages then measure work only
    text = chain_kernel(n)
    steps = parse_pipeline(default_pipeline(gpu))
    names = [s.name for s in steps]
    stage_of = {}
    for k, name in enumerate(names):
        if name == "eqsat":
            stage_of[k] = "eqsat"
        elif k > names.index("select-instructions"):
            stage_of[k] = "ptx passes"
        elif k > names.index("eqsat"):
            stage_of[k] = "lower"
        else:
            stage_of[k] = "canonicalize"
    out: dict[str, list[float]] = {s: [0.0, 0.0] for s in STAGES}

    def done(stage: str, start: float) -> None:
        out[stage][0] += time.process_time() - start
        out[stage][1] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    start = time.process_time()
    module = parse_text(text, f"chain{n}.mlir")
    done("parse", start)
    start = time.process_time()
    problems = get_language("tile").check(module)
    assert not problems, problems
    done("verify", start)
    ctx = PassContext()
    for k, step in enumerate(steps):
        start = time.process_time()
        step.apply(module, ctx)
        done(stage_of[k], start)
    start = time.process_time()
    module.ptx.render()
    done("emit", start)
    return {s: (v[0], v[1]) for s, v in out.items()}


def exponent(sizes: list[int], values: list[float]) -> float:
    """Least-squares slope of log(value) against log(size)."""
    points = [(math.log(n), math.log(v)) for n, v in zip(sizes, values) if v > 0]
    if len(points) < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,300,1000,3000,10000")
    parser.add_argument("--gpu-name", default="sm_90", choices=["sm_90", "sm_100"])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one, args.gpu_name)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    for n in sizes:
        proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--gpu-name",
                               args.gpu_name], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"N={n}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            return 1
        results[n] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"N={n} done", file=sys.stderr)
    print(f"Synthetic chain of N 1024xf32 ops, {args.gpu_name}: CPU seconds per stage "
          "(peak RSS in MB when the stage ends)\n")
    print("| stage | " + " | ".join(f"N={n}" for n in sizes) + " | exponent |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for stage in [*STAGES, "total"]:
        if stage == "total":
            times = [sum(results[n][s][0] for s in STAGES) for n in sizes]
            cells = [f"{t:.2f} ({results[n]['emit'][1]:.0f})" for n, t in zip(sizes, times)]
        else:
            times = [results[n][stage][0] for n in sizes]
            cells = [f"{results[n][stage][0]:.2f} ({results[n][stage][1]:.0f})"
                     for n in sizes]
        print(f"| {stage} | " + " | ".join(cells) + f" | {exponent(sizes, times):.2f} |")
    peaks = [results[n]["emit"][1] for n in sizes]
    print(f"\npeak RSS exponent: {exponent(sizes, peaks):.2f} (the whole process, "
          "interpreter and libraries included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
