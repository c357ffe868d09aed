"""Lab 4's kernels, compiled with a conversion planner and run in the PTX emulator.

    python labs/04-layouts/measure.py [--conversions]
    python labs/04-layouts/measure.py --ptx KERNEL [--reference]

compiles each kernel of kernels/ and three of examples/ with the default sm_100 pipeline,
once with starter/conversions.py planning the conversions and once with nanotile's own
layout algebra (the reference), runs the PTX in the emulator, and prints one row per
kernel:

- the convert_layout ops left after lower-convert-layout (a round trip through shared
  memory is two, a shuffle or a renaming one);
- the warp instructions the emulator executed;
- whether your build's output matches the interpreter's.

``--conversions`` also lists each conversion of each kernel: its kind, the select bits of
nanotile's shuffle plan, and the route your planner and nanotile's take. Use it to tune
the cost model. ``--ptx KERNEL`` prints the PTX of one kernel as your planner builds it
(``--reference``: as nanotile's does).

How the planner is plugged in: the pipeline is nanotile's default, with its
lower-convert-layout and distribute steps given ``planner=ConversionPlanner(conversion,
route)`` (nanotile/targets/ptx/lower_convert_layout.py) made of your functions.
"""

from __future__ import annotations

import dataclasses
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"
GPU = "sm_100"
PLANNED = ("lower-convert-layout", "distribute")  # the steps that take the planner


@dataclass(frozen=True)
class Kernel:
    name: str
    path: Path
    # (the kernel's arguments, the grid, which argument is the output)
    inputs: Callable[[], tuple[list, tuple[int, ...], int]]
    exact: bool  # the output must equal the interpreter's bit for bit (else: to 1e-5)


@dataclass
class Measurement:
    converts: int             # convert_layout ops after lower-convert-layout
    instructions: int         # warp instructions the emulator executed
    output: np.ndarray        # the output argument after the run
    conversions: list[tuple]  # (src, dst) of each conversion lower-convert-layout saw


def _pointer_inputs(path: Path) -> Callable[[], tuple[list, tuple[int, ...], int]]:
    """Random arrays for a kernel of kernels/: one per pointer parameter, sized by the
    tile the kernel offsets it by; the last is the output (zeros)."""
    def make() -> tuple[list, tuple[int, ...], int]:
        from nanotile.ir.rewrite import numpy_dtype
        from nanotile.loader import load_file

        (entry,) = load_file(str(path)).entries()
        sizes = [op.results[0].type.num_elements for op in entry.walk()
                 if op.name == "load_ptr_tko"]
        params = entry.regions[0].block.arguments
        rng = np.random.default_rng(0)
        arrays = []
        for param in params:
            dtype = np.dtype(numpy_dtype(param.type.element.pointee))
            arrays.append((rng.standard_normal(sizes[0]) * 8).astype(dtype))
        arrays[-1][:] = 0
        return arrays, (1,), len(arrays) - 1

    return make


def _example_inputs(name: str) -> Callable[[], tuple[list, tuple[int, ...], int]]:
    """examples/check.py's inputs for an example, in cuTile's calling convention."""
    def make() -> tuple[list, tuple[int, ...], int]:
        from nanotile import labkit
        from nanotile.interp import cutile_args

        check = labkit.load_module(EXAMPLES / "check.py", "nanotile_lab_4_examples")
        example = check.EXAMPLES[name]
        args, grid = example.inputs(np.random.default_rng(0))
        flat = cutile_args(*args)
        output = next(i for i, a in enumerate(flat) if a is args[example.output])
        return list(flat), tuple(grid), output

    return make


KERNELS = [Kernel(p.stem, p, _pointer_inputs(p), exact=p.stem.startswith("transpose"))
           for p in sorted((HERE / "kernels").glob("*.mlir"))] + \
          [Kernel(name, EXAMPLES / f"{name}.mlir", _example_inputs(name), exact=False)
           for name in ("softmax_rows", "rms_norm", "matmul_f16")]


def planner_of(solution, name: str):
    """The ConversionPlanner made of a solution's ``conversion`` and ``route``."""
    from nanotile.targets.ptx.lower_convert_layout import ConversionPlanner

    return ConversionPlanner(solution.conversion, solution.route, name)


def reference_planner():
    from nanotile.targets.ptx.lower_convert_layout import LAYOUT_ALGEBRA

    return LAYOUT_ALGEBRA


def pipeline(planner) -> tuple[list, int]:
    """The default pipeline with ``planner`` in the steps that plan conversions, and the
    index of lower-convert-layout."""
    import nanotile.targets  # noqa: F401 - registers the back end's passes
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    steps = [dataclasses.replace(step, planner=planner) if step.name in PLANNED else step
             for step in parse_pipeline(default_pipeline(GPU))]
    return steps, [s.name for s in steps].index("lower-convert-layout")


def measure(kernel: Kernel, planner) -> Measurement:
    """Compile ``kernel`` with ``planner`` and run it in the emulator."""
    from nanotile.ir.layouts import LinearLayout
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.ptxemu.run import run_ptx

    module = load_file(str(kernel.path))
    steps, at = pipeline(planner)
    run = PipelineRun(RunOptions(verify=False), io.StringIO())
    run.run(module, steps[:at])
    conversions = [(op.operands[0].type.layout, op.results[0].type.layout)
                   for op in module.walk() if op.name == "convert_layout"]
    conversions = [(s, d) for s, d in conversions
                   if isinstance(s, LinearLayout) and isinstance(d, LinearLayout)]
    run.run(module, steps[at:at + 1])
    converts = sum(op.name == "convert_layout" for op in module.walk())
    run.run(module, steps[at + 1:])
    args, grid, output = kernel.inputs()
    stats = run_ptx(module.ptx.render(), kernel.name, grid=grid, args=args, batch=False)
    return Measurement(converts, stats.instructions, args[output], conversions)


def interpreted(kernel: Kernel) -> np.ndarray:
    """The kernel's output in nanotile's interpreter."""
    from nanotile.interp import run
    from nanotile.loader import load_file

    args, grid, output = kernel.inputs()
    run(load_file(str(kernel.path)), kernel.name, grid, *args)
    return args[output]


def mismatch(kernel: Kernel, got: np.ndarray, expected: np.ndarray) -> str | None:
    """Where the emulated output differs from the interpreter's, or None."""
    a, b = got.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    same = (a == b) | (np.isnan(a) & np.isnan(b)) if kernel.exact else \
        np.isclose(a, b, rtol=1e-5, atol=1e-5, equal_nan=True)
    if same.all():
        return None
    i = int(np.flatnonzero(~same)[0])
    return (f"element {i} is {float(a[i])!r}, the interpreter says {float(b[i])!r} "
            f"({int((~same).sum())} of {a.size} differ)")


def compiled_ptx(kernel: Kernel, planner) -> str:
    """The PTX of ``kernel`` built with ``planner``."""
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions

    module = load_file(str(kernel.path))
    steps, _ = pipeline(planner)
    PipelineRun(RunOptions(verify=False), io.StringIO()).run(module, steps)
    return module.ptx.render()


def main(argv: list[str]) -> int:
    from nanotile import labkit
    from nanotile.ir import layouts

    starter = labkit.load_module(HERE / "starter" / "conversions.py", "lab4_starter")
    yours, reference = planner_of(starter, "starter"), reference_planner()
    if "--ptx" in argv:
        wanted = argv[argv.index("--ptx") + 1] if argv.index("--ptx") + 1 < len(argv) else ""
        chosen = [k for k in KERNELS if k.name == wanted]
        if not chosen:
            sys.stderr.write(f"no kernel '{wanted}' (kernels: "
                             f"{', '.join(k.name for k in KERNELS)})\n")
            return 2
        sys.stdout.write(compiled_ptx(chosen[0], reference if "--reference" in argv
                                      else yours))
        return 0
    print(f"{'kernel':<26} {'convert_layout':>15} {'warp instructions':>19}   output")
    print(f"{'':<26} {'yours':>7} {'ref':>7} {'yours':>9} {'ref':>9}")
    for kernel in KERNELS:
        ref = measure(kernel, reference)
        try:
            mine = measure(kernel, yours)
        except Exception as error:  # noqa: BLE001 - the student's code: report it
            print(f"{kernel.name:<26} failed: {type(error).__name__}: {error}")
            continue
        wrong = mismatch(kernel, mine.output, interpreted(kernel))
        print(f"{kernel.name:<26} {mine.converts:>7} {ref.converts:>7} "
              f"{mine.instructions:>9} {ref.instructions:>9}   "
              f"{'matches the interpreter' if wrong is None else 'WRONG: ' + wrong}")
        if "--conversions" in argv:
            for src, dst in ref.conversions:
                kind = layouts.conversion(src, dst)
                best = layouts.shuffle_plan(src, dst, 5) if kind == "warp" else None
                bits = f", a plan with {best.select_bits} select bit" \
                    f"{'' if best.select_bits == 1 else 's'}" if best else ""
                mine_route = _route(starter.conversion, starter.route, src, dst)
                ref_route = _route(layouts.conversion, layouts.shuffle_plan, src, dst)
                print(f"    {kind}{bits}, {src.registers} -> {dst.registers} registers: "
                      f"yours {mine_route}, nanotile's {ref_route}")
    return 0


def _route(conversion, route, src, dst) -> str:
    try:
        kind = conversion(src, dst)
        if kind != "warp":
            return {"none": "nothing", "registers": "a renaming"}.get(kind, "shared memory")
        return "shuffles" if route(src, dst) is not None else "shared memory"
    except Exception as error:  # noqa: BLE001 - the student's code: report it
        return f"{type(error).__name__}"


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout: nanotile beside labs/
    sys.exit(main(sys.argv[1:]))
