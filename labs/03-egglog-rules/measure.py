"""Lab 3's kernels, and what the compiler makes of them with a float-identities rule file.

    python labs/03-egglog-rules/measure.py [RULES.egg]

(default: starter/float_identities.egg) prints, for each kernel of kernels/, the ops left
after eqsat and the warp instructions the PTX emulator counts when the kernel runs, once
with RULES.egg in place of nanotile's own float-identities ruleset and once with
nanotile's (the reference), and whether the kernel after eqsat still computes, bit for
bit, what it computed before (in the interpreter, on inputs full of -0.0, subnormals,
infinities and NaNs). The grader (grader.py) measures with these same functions.

How a rule file is plugged in: the default sm_100 pipeline runs with its eqsat step
given ``builtin=false`` and ``rules=`` every built-in rule file but
float_identities.egg, plus RULES.egg: the same as
``nanotile K.mlir -p 'eqsat{builtin=false rules=a.egg,b.egg,...}'``.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
STARTER = HERE / "starter" / "float_identities.egg"
GPU = "sm_100"
ELEMENTS = 128  # every kernel reads and writes tiles of 128 elements


@dataclass(frozen=True)
class Kernel:
    name: str
    path: Path
    fast_math: bool = False  # compiled with eqsat{fast-math=true}


KERNELS = [Kernel(p.stem, p, fast_math=p.stem == "fast_math")
           for p in sorted((HERE / "kernels").glob("*.mlir"))]


@dataclass
class Measurement:
    """One kernel compiled and run with one set of rule files."""

    ops: int                      # ops of the kernel after eqsat
    instructions: int             # warp instructions the emulator executed
    after_eqsat: str              # the kernel's text after eqsat
    inputs: list[np.ndarray]      # the kernel's arguments (the last is its output)
    before: np.ndarray            # the output the interpreter computes before eqsat
    after: np.ndarray             # ... and after eqsat


def reference_rules() -> Path:
    from nanotile.egraph.schema import RULES_DIR

    return RULES_DIR / "float_identities.egg"


def rule_files(float_identities: Path) -> list[Path]:
    """nanotile's built-in rule files with ``float_identities`` in place of its own."""
    from nanotile.egraph.engine import builtin_rule_files

    own = reference_rules()
    return [p for p in builtin_rule_files() if p != own] + [float_identities]


def pipeline(files: list[Path], fast_math: bool) -> tuple[list, int]:
    """The default pipeline with its eqsat step loading ``files`` only, and the index of
    that step."""
    import nanotile.targets  # noqa: F401 - registers the back end's passes
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    steps = parse_pipeline(default_pipeline(GPU))
    at = [s.name for s in steps].index("eqsat")
    steps[at] = dataclasses.replace(steps[at], builtin=False, fast_math=fast_math,
                                    rules=",".join(str(p) for p in files))
    return steps, at


def measure(kernel: Kernel, float_identities: Path) -> Measurement:
    """Compile ``kernel`` with ``float_identities`` as its float-identities ruleset, run it
    in the emulator and in the interpreter (before and after eqsat)."""
    from nanotile.ir.printer import print_module
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions, languages_after
    from nanotile.ptxemu.run import run_ptx

    module = load_file(str(kernel.path))
    before = copy.deepcopy(module)
    steps, at = pipeline(rule_files(float_identities), kernel.fast_math)
    PipelineRun(RunOptions(verify=True), io.StringIO()).run(module, steps[:at + 1])
    after = copy.deepcopy(module)
    rest = RunOptions(verify=False, input_language=languages_after(steps[:at + 1], "tile"))
    PipelineRun(rest, io.StringIO()).run(module, steps[at + 1:])
    arrays = inputs(before)
    stats = run_ptx(module.ptx.render(), kernel.name, grid=(1, 1, 1),
                    args=[a.copy() for a in arrays])
    return Measurement(ops=count_ops(after), instructions=stats.instructions,
                       after_eqsat=print_module(after), inputs=arrays,
                       before=interpret(before, kernel.name, arrays),
                       after=interpret(after, kernel.name, arrays))


def count_ops(module) -> int:
    """Ops inside the kernels (the kernels themselves and their returns aside)."""
    return sum(1 for entry in module.entries() for op in entry.walk()
               if op is not entry and op.name != "return")


def interpret(module, kernel: str, arrays: list[np.ndarray]) -> np.ndarray:
    """The output array (the last argument) after the interpreter runs ``kernel``."""
    from nanotile.interp import run

    copies = [a.copy() for a in arrays]
    run(copy.deepcopy(module), kernel, 1, *copies)
    return copies[-1]


def inputs(module) -> list[np.ndarray]:
    """One array per pointer parameter. The first two (x and y) hold every pair of the
    values where float identities fail (signed zeros, subnormals, infinities, NaN, +-1,
    the largest float), then ordinary values; the last array is the output, filled with
    a pattern the kernel overwrites."""
    from nanotile.ir.rewrite import numpy_dtype

    (entry,) = module.entries()
    dtypes = [np.dtype(numpy_dtype(p.type.element.pointee))
              for p in entry.regions[0].block.arguments]
    special = _special(dtypes[0])
    pairs = len(special) ** 2
    rng = np.random.default_rng(0)
    arrays = []
    for number, dtype in enumerate(dtypes):
        ordinary = (rng.standard_normal(ELEMENTS - pairs) * 4).astype(dtype)
        every = np.repeat(special, len(special)) if number == 0 else \
            np.tile(special, len(special))
        arrays.append(np.concatenate([every.astype(dtype), ordinary]))
    arrays[-1][:] = 7
    return arrays


def _special(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    return np.array([0.0, -0.0, tiny, -3 * tiny, info.smallest_normal, np.inf, -np.inf,
                     np.nan, 1.0, -1.0, info.max], dtype=dtype)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit, except that any NaN equals any NaN (payloads are not kept)."""
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    equal = (a.view(width) == b.view(width)) | (np.isnan(a) & np.isnan(b))
    return bool(equal.all())


def first_difference(measured: Measurement) -> str:
    """Where the outputs before and after eqsat first differ, with the inputs there."""
    a, b = measured.before, measured.after
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    differ = (a.view(width) != b.view(width)) & ~(np.isnan(a) & np.isnan(b))
    i = int(np.flatnonzero(differ)[0])
    x, y = (float(array[i]) for array in measured.inputs[:2])
    return f"x={x!r}, y={y!r} gave {float(a[i])!r} before eqsat, {float(b[i])!r} after"


def main(argv: list[str]) -> int:
    mine = Path(argv[0]) if argv else STARTER
    print(f"{'kernel':<12} {'ops after eqsat':>17} {'warp instructions':>19}   meaning")
    print(f"{'':<12} {'yours':>8} {'ref':>8} {'yours':>9} {'ref':>9}")
    for kernel in KERNELS:
        yours = measure(kernel, mine)
        reference = measure(kernel, reference_rules())
        kept = "bit-identical" if same_bits(yours.before, yours.after) else \
            f"CHANGED: {first_difference(yours)}"
        if kernel.fast_math:
            kept = "(fast-math: rounding may change)"
        print(f"{kernel.name:<12} {yours.ops:>8} {reference.ops:>8} "
              f"{yours.instructions:>9} {reference.instructions:>9}   {kept}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent.parent))  # run from a checkout: nanotile beside labs/
    sys.exit(main(sys.argv[1:]))
