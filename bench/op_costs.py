"""What each elementwise op costs on each target, measured: the SASS instructions ptxas
makes of one element of it, from nanotile's PTX, beside eqsat's cost table.

For every op below and every target, a kernel loads three 1024-element tiles (eight
elements per thread), applies the op and stores the result and the other two operands;
nanotile compiles it, ptxas assembles it and cuobjdump lists its SASS. The op's cost is
the kernel's SASS instructions (NOPs left out) minus those of the same kernel storing its
first operand unchanged, per element. Register allocation moves the count by an
instruction or two per kernel, so the figures are good to about 0.3 per element.

    .venv/bin/python bench/op_costs.py [--targets sm_90,sm_100]

The last column is the op's cost in eqsat's extraction (nanotile/egraph/cost.py), whose
order the measurement should follow.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# op -> (element type, the op's text with %x, %y, %z as its operands)
OPS = {
    "addf": ("f32", "addf %x, %y"), "subf": ("f32", "subf %x, %y"),
    "mulf": ("f32", "mulf %x, %y"), "fma": ("f32", "fma %x, %y, %z"),
    "divf": ("f32", "divf %x, %y"), "remf": ("f32", "remf %x, %y"),
    "negf": ("f32", "negf %x"), "absf": ("f32", "absf %x"),
    "sqrt": ("f32", "sqrt %x"), "rsqrt": ("f32", "rsqrt %x"),
    "exp": ("f32", "exp %x"), "exp2": ("f32", "exp2 %x"),
    "log": ("f32", "log %x"), "log2": ("f32", "log2 %x"),
    "addi": ("i32", "addi %x, %y"), "subi": ("i32", "subi %x, %y"),
    "muli": ("i32", "muli %x, %y"), "mulhii": ("i32", "mulhii %x, %y"),
    "divi": ("i32", "divi %x, %y signed"), "remi": ("i32", "remi %x, %y signed"),
    "shli": ("i32", "shli %x, %y"), "shri": ("i32", "shri %x, %y signed"),
    "andi": ("i32", "andi %x, %y"), "ori": ("i32", "ori %x, %y"),
    "xori": ("i32", "xori %x, %y"),
}
COPY = "copy"  # the baseline: the first operand stored as it is


def kernel(op: str) -> str:
    """The measuring kernel of ``op`` (or of the baseline) as Tile IR text. Each operand
    is also stored as it was loaded, so that the baseline loads every operand too."""
    element, text = OPS.get(op, ("f32", "%x"))
    tile = f"tile<1024x{element}>"
    view = f"tensor_view<1024x{element}, strides=[1]>"
    part = f"partition_view<tile=(1024), {view}>"
    names = ("x", "y", "z")
    pointers = ", ".join(f"%{p}: tile<ptr<{element}>>" for p in ("a", "b", "c", "d", "e", "f"))
    lines = [f"entry @{op}({pointers}) {{",
             "  %t = make_token : token",
             "  %i = constant <i32: 0> : tile<i32>"]
    for name, pointer in zip(names, ("a", "b", "c")):
        lines += [f"  %v{name} = make_tensor_view %{pointer}, shape = [1024], strides = [1] : {view}",
                  f"  %p{name} = make_partition_view %v{name} : {part}",
                  f"  %{name}, %t{name} = load_view_tko weak %p{name}[%i] "
                  f"token = %t : {part}, tile<i32> -> {tile}, token"]
    if op != COPY:
        lines.append(f"  %r = {text} : {tile}")
    stored = ("%r" if op != COPY else "%x", "%y", "%z")
    for k, (value, pointer) in enumerate(zip(stored, ("d", "e", "f"))):
        lines += [f"  %w{k} = make_tensor_view %{pointer}, shape = [1024], strides = [1] : {view}",
                  f"  %q{k} = make_partition_view %w{k} : {part}",
                  f"  %s{k} = store_view_tko weak {value}, %q{k}[%i] token = %t : {tile}, "
                  f"{part}, tile<i32> -> token"]
    return "\n".join(lines + ["  return", "}"]) + "\n"


def sass_instructions(text: str, gpu: str) -> int:
    """SASS instructions (NOPs left out) of the kernel ``text`` compiled for ``gpu``."""
    from nanotile.ir.parser import parse_modules
    from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

    cubin, _ = assemble(compile_to_ptx(parse_modules(text, "<op_costs>")[0], gpu), gpu)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        sass = subprocess.run([str(ptxas_path().parent / "cuobjdump"), "-sass", str(path)],
                              check=True, capture_output=True, text=True).stdout
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass)
    return sum(1 for o in ops if not o.startswith("NOP"))


ELEMENTS_PER_THREAD = 8  # 1024 elements over the default 128 threads


def measure(gpu: str) -> dict[str, float]:
    base = sass_instructions(kernel(COPY), gpu)
    return {op: (sass_instructions(kernel(op), gpu) - base) / ELEMENTS_PER_THREAD
            for op in OPS}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="sm_90,sm_100")
    args = parser.parse_args()
    from nanotile.egraph.cost import CostModel

    targets = args.targets.split(",")
    measured = {gpu: measure(gpu) for gpu in targets}
    model = CostModel()
    print(f"{'op':8}" + "".join(f"{gpu:>10}" for gpu in targets) + f"{'eqsat cost':>12}")
    for op in OPS:
        print(f"{op:8}" + "".join(f"{measured[gpu][op]:>10.2f}" for gpu in targets)
              + f"{model.op_cost(op):>12}")
    print("SASS instructions per element beyond a copy (ptxas + cuobjdump)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
