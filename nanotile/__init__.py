"""nanotile: a teaching compiler for NVIDIA CUDA Tile IR.

Public API (imports are lazy so that ``import nanotile`` stays fast):

- ``parse(text, filename)`` -> ir.Module        (Tile IR text)
- ``load(path)`` -> ir.Module                    (text or bytecode, by content)
- ``print_module(module)`` -> str               (canonical text)
- ``run(module_or_path, kernel, grid, *args)``    (execute in the NumPy interpreter;
  ``device="emulator", gpu_name="sm_100"``: compile to PTX, run it in the PTX emulator;
  sm_100 is the default, as for the compiler)
"""

from __future__ import annotations

__version__ = "0.1.0"


def parse(text: str, filename: str = "<string>"):
    from .ir.parser import parse_text

    return parse_text(text, filename)


def load(path: str):
    from .loader import load_file

    return load_file(path)


def print_module(module, **options) -> str:
    from .ir.printer import print_module as _print

    return _print(module, **options)


def run(module_or_path, kernel: str, grid, *args, device: str = "interp",
        gpu_name: str | None = None, **options) -> None:
    """Run a kernel in the reference interpreter (``device="interp"``, the options of
    nanotile.interp.run), or with ``device="emulator"`` compile it to PTX for ``gpu_name``
    (default: the compiler's, sm_100) and run that in the PTX emulator
    (nanotile.emulated_run; ``out`` receives the printed text; the interpreter-only options
    are refused)."""
    if device == "emulator":
        from .emulated_run import run_emulated

        unknown = set(options) - {"out", "progress"}
        if unknown:
            raise TypeError(f"options {sorted(unknown)} apply to the interpreter only")
        return run_emulated(module_or_path, kernel, grid, *args, gpu_name=gpu_name,
                            out=options.get("out"), progress=options.get("progress"))
    if device != "interp":
        from .interp.errors import InterpError

        raise InterpError(f"unknown device '{device}' (known: interp, emulator)")
    from .interp import run as _run

    return _run(module_or_path, kernel, grid, *args, **options)
