"""Export the example kernels with NVIDIA's cuTile Python and keep them as nanotile writes them.

    python examples/export.py [NAME ...]           # rewrite NAME.mlir and NAME.tileirbc
    python examples/export.py --check [NAME ...]   # compare instead; exit 1 on a difference

Needs the cuda-tile package (1.7.0; nanotile's ``[oracles]`` extra installs it) and no GPU:
cuTile's ``export_kernel(..., output_format="tileir_bytecode", gpu_code=None)`` compiles the
Python to Tile IR bytecode (version 13.4) without a driver. For each kernel NAME, in order:

1. cuTile exports NAME.py's kernel with the signature below to a temporary ``.tileirbc``;
2. ``nanotile exported.tileirbc -o NAME.mlir``: nanotile's canonical text of it, under a
   header comment (cuTile's debug info, the file and line of each op, is left out, so the
   files do not depend on where this ran);
3. ``nanotile NAME.mlir --emit=bytecode -o NAME.tileirbc``: nanotile's bytecode of that text.

``--check`` does the same into a temporary folder and compares with the files here
(tests/examples runs it when cuda-tile is installed).
"""

from __future__ import annotations

import argparse
import importlib
import io
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BYTECODE_VERSION = "13.4"


def header(name: str) -> str:
    return (f"// {name}: exported from examples/{name}.py by cuTile Python "
            f"(examples/export.py, bytecode {BYTECODE_VERSION}), printed by nanotile.\n"
            f"// Run it: python examples/check.py {name}\n")


def signatures() -> dict:
    """Kernel name -> the parameters cuTile compiles it for (one signature each).

    Arrays: int32 shapes and strides, contiguous last axis (stride 1), 16-byte-aligned
    bases, no aliasing; tile sizes are the constants of each NAME.py."""
    import cuda.tile as ct
    from cuda.tile.compilation import ArrayConstraint, ScalarConstraint

    def array(dtype, ndim: int) -> ArrayConstraint:
        return ArrayConstraint(dtype, ndim, index_dtype=ct.int32, stride_lower_bound_incl=0,
                               alias_groups=(), may_alias_internally=False,
                               stride_constant=(None,) * (ndim - 1) + (1,),
                               base_addr_divisible_by=16)

    f32, f16 = ct.float32, ct.float16
    axpy, rms, mm, sm = (_example(n) for n in ("axpy", "rms_norm", "matmul_f16", "softmax_rows"))
    return {
        "axpy": [array(f32, 1), array(f32, 1), array(f32, 1), ScalarConstraint(f32), axpy.TILE],
        "rms_norm": [array(f32, 2), array(f32, 1), array(f32, 2), ScalarConstraint(f32),
                     rms.COLS],
        "matmul_f16": [array(f16, 2), array(f16, 2), array(f16, 2), mm.BM, mm.BN, mm.BK],
        "softmax_rows": [array(f32, 2), array(f32, 2), sm.COLS],
    }


def _example(name: str):
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module(name)


def export_cutile(name: str, params: list) -> bytes:
    """cuTile's bytecode of kernel ``name`` (the function of that name in NAME.py)."""
    from cuda.tile.compilation import CallingConvention, KernelSignature, export_kernel

    kernel = getattr(_example(name), name)
    signature = KernelSignature(params, CallingConvention.cutile_python_v1(), symbol=name)
    buf = io.BytesIO()
    export_kernel(kernel, [signature], buf, output_format="tileir_bytecode",
                  bytecode_version=BYTECODE_VERSION)
    return buf.getvalue()


def nanotile(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "nanotile", *args], check=True)


def write(name: str, params: list, folder: Path) -> None:
    """NAME.mlir and NAME.tileirbc in ``folder``, made as the module docstring says."""
    with tempfile.TemporaryDirectory() as tmp:
        exported = Path(tmp) / f"{name}.cutile.tileirbc"
        exported.write_bytes(export_cutile(name, params))
        text = folder / f"{name}.mlir"
        nanotile(str(exported), "-o", str(text))
    text.write_text(header(name) + text.read_text())
    nanotile(str(text), "--emit=bytecode", "-o", str(folder / f"{name}.tileirbc"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help="kernels to export (default: all)")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in examples/ instead of writing them")
    args = ap.parse_args(argv)
    table = signatures()
    unknown = set(args.names) - set(table)
    if unknown:
        ap.error(f"unknown kernel(s) {sorted(unknown)}; known: {sorted(table)}")
    differ = []
    for name in args.names or table:
        if not args.check:
            write(name, table[name], HERE)
            print(f"wrote examples/{name}.mlir and examples/{name}.tileirbc")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            write(name, table[name], Path(tmp))
            for suffix in (".mlir", ".tileirbc"):
                same = (Path(tmp) / (name + suffix)).read_bytes() == (HERE / (name + suffix)
                                                                       ).read_bytes()
                print(f"examples/{name}{suffix}: {'same' if same else 'DIFFERS'}")
                if not same:
                    differ.append(name + suffix)
    if differ:
        print(f"{len(differ)} file(s) differ from a fresh export: {', '.join(differ)} "
              f"(rerun python examples/export.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
