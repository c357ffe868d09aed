"""What the ptx-* passes do to the PTX of the cuTile corpus kernels (both targets):

1. each pass alone on the PTX select-instructions writes: instructions removed (only the passes
   that delete instructions score here: the others rewrite operands so that dead code
   and CSE find more);
2. each pass left out of the PTX pipeline (nanotile.targets.ptx.passes.PIPELINE): how many instructions
   more the rest leaves, i.e. what the pass contributes within the pipeline;
3. before/after the whole pipeline, per kernel: PTX instructions, declared registers, and
   SASS instructions (ptxas' cubin .text bytes / 16), so that one sees how much of the
   PTX-level gain survives ptxas (which optimises too), warp instructions executed in the
   PTX emulator on corpus_cases' inputs, and the time the passes take; the last two
   columns: the same with the optional ptx-hoist-loop-invariants added after the first
   round (fewer emulated instructions, but more SASS where registers are tight).

    .venv/bin/python bench/ptx_passes_bench.py [KERNEL ...]
"""

from __future__ import annotations

import io
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "targets"))
CORPUS = ROOT / ".." / "shared" / "corpus" / "cutile"
TARGETS = ["sm_90", "sm_100"]


def unoptimised(name: str, target: str) -> str:
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    module = load_file(str(CORPUS / f"{name}.tileirbc"))
    options = RunOptions(verify=False, stop_after="select-instructions")
    PipelineRun(options, io.StringIO()).run(module, parse_pipeline(default_pipeline(target)))
    return module.ptx.render()


def count(text: str) -> int:
    from nanotile.targets.ptx.ir import parse_ptx_program

    return parse_ptx_program(text).instruction_count()


def registers(text: str) -> int:
    return sum(int(n) - 1 for n in re.findall(r"\.reg \.\w+ %\w+?<(\d+)>;", text))


def run(text: str, pipeline: str) -> str:
    from nanotile.passes.base import PassContext
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets.ptx.ir import load_ptx_module

    module = load_ptx_module(text)
    for step in parse_pipeline(pipeline):
        step.apply(module, PassContext())
    return module.ptx.render()


def sass(text: str, target: str) -> int | None:
    from nanotile.targets.compile import assemble, ptxas_path

    if ptxas_path() is None:
        return None
    from mma_quality import text_sizes

    cubin, _ = assemble(text, target)
    return sum(text_sizes(cubin).values()) // 16


def emulated(name: str, text: str) -> int:
    """Warp instructions the PTX emulator executes for the kernel on corpus_cases' inputs."""
    import copy

    import numpy as np
    from corpus_cases import corpus_case

    from nanotile.interp import cutile_args
    from nanotile.ptxemu import run_ptx

    grid, args, _, _, _ = corpus_case(name, np.random.default_rng(11))
    dims = tuple(grid) + (1,) * (3 - len(grid))
    stats = run_ptx(text, name, grid=dims, args=list(cutile_args(*copy.deepcopy(args))))
    return stats.instructions


def main(names: list[str]) -> None:
    from corpus_cases import KERNELS

    from nanotile.targets.ptx.passes import PIPELINE, STEPS

    names = names or KERNELS
    steps = PIPELINE.split(",")
    # loop hoisting without its register-pressure budget
    hoisted = ",".join("ptx-hoist-loop-invariants{max-pressure=100000}"
                       if s == "ptx-hoist-loop-invariants" else s for s in STEPS)
    distinct = list(dict.fromkeys(steps))
    alone = dict.fromkeys(distinct, 0)
    ablation = dict.fromkeys(distinct, 0)
    rows = []
    total_before = total_after = 0
    for name in names:
        for target in TARGETS:
            before = unoptimised(name, target)
            n0 = count(before)
            t0 = time.perf_counter()
            after = run(before, PIPELINE)
            seconds = time.perf_counter() - t0
            n1 = count(after)
            for p in distinct:
                alone[p] += n0 - count(run(before, p))
                ablation[p] += count(run(before, ",".join(s for s in steps if s != p))) - n1
            total_before += n0
            total_after += n1
            with_hoist = run(before, hoisted)
            rows.append((name, target, n0, n1, registers(before), registers(after),
                         sass(before, target), sass(after, target),
                         emulated(name, before), emulated(name, after), seconds,
                         sass(with_hoist, target), emulated(name, with_hoist)))
    print(f"PTX instructions over {len(names)} kernels x {len(TARGETS)} targets: "
          f"{total_before} -> {total_after} "
          f"({100 * (total_before - total_after) / total_before:.1f}% fewer)\n")
    print("alone: the pass by itself on select-instructions's PTX; without: how many more "
          "instructions\nthe pipeline leaves when the pass is left out (what it enables)\n")
    print("| pass | removed alone | share | extra instructions without it | share |")
    print("|---|---:|---:|---:|---:|")
    for p in distinct:
        print(f"| {p} | {alone[p]} | {100 * alone[p] / total_before:.1f}% | {ablation[p]} "
              f"| {100 * ablation[p] / total_before:.1f}% |")
    print("\n| kernel | target | PTX instr before | after | declared regs before | after "
          "| SASS instr before | after | emulated warp instr before | after | passes (s) "
          "| unbounded hoist: SASS | emulated |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {r[7]} "
              f"| {r[8]} | {r[9]} | {r[10]:.2f} | {r[11]} | {r[12]} |")


if __name__ == "__main__":
    main(sys.argv[1:])
