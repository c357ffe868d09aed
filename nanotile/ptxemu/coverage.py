"""Which instructions of a PTX file the emulator cannot run.

``python -m nanotile.ptxemu.coverage FILE.ptx ...`` prints, per kernel, either
``ok`` or each unsupported opcode with its count and first line.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from nanotile.ptxemu.errors import PtxError
from nanotile.ptxemu.machine import compile_kernel
from nanotile.ptxemu.memory import GlobalMemory
from nanotile.ptxemu.ptx_parser import parse_ptx


def unsupported(text: str, filename: str = "<ptx>") -> dict[str, list[PtxError]]:
    """Per entry kernel, the errors of the instructions that do not compile."""
    from nanotile.ptxemu.run import _global_vars

    module = parse_ptx(text, filename)
    out: dict[str, list[PtxError]] = {}
    for name, fn in module.functions.items():
        if fn.kind != "entry" or fn.body is None:
            continue
        errors: list[PtxError] = []
        symbols, _ = _global_vars(module, GlobalMemory())
        compile_kernel(module, name, symbols, errors)
        out[name] = errors
    return out


def missing_opcodes(errors: list[PtxError], text: str) -> Counter:
    lines = text.splitlines()
    c: Counter = Counter()
    for e in errors:
        words = lines[e.line - 1].split() if e.line else ["?"]
        opcode = words[1] if words[0].startswith("@") else words[0]
        c[opcode.rstrip(";")] += 1
    return c


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    status = 0
    for path in argv:
        text = Path(path).read_text()
        try:
            result = unsupported(text, path)
        except PtxError as exc:
            print(f"{path}: {exc}")
            status = 1
            continue
        for kernel, errors in result.items():
            if not errors:
                print(f"{path}: {kernel}: ok")
                continue
            status = 1
            print(f"{path}: {kernel}: {len(errors)} unsupported instruction(s)")
            for opcode, n in sorted(missing_opcodes(errors, text).items()):
                first = next(e for e in errors if opcode in text.splitlines()[e.line - 1])
                print(f"    {opcode}  x{n}  (first at line {first.line}: {first.message})")
    return status


if __name__ == "__main__":
    sys.exit(main())
