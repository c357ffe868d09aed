"""``%round_trip_test INPUT OUTPUT_BASE [FLAGS...]`` for the reference lit tests.

Text -> bytecode -> text with nanotile-translate, compared with nanotile-opt's print of
the same input (blank lines ignored): the check NVIDIA's round_trip_test.sh makes with
cuda-tile-translate and cuda-tile-opt.
"""

from __future__ import annotations

import difflib
import subprocess
import sys


def _tool(module: str, *args: str) -> None:
    cmd = [sys.executable, "-m", module, *args]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(f"command failed (rc={proc.returncode}): {' '.join(cmd)}\n"
                         f"{proc.stdout}{proc.stderr}")
        raise SystemExit(1)


def _content_lines(path: str) -> list[str]:
    with open(path) as f:
        return [line for line in f.read().splitlines() if line.strip()]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: round_trip INPUT OUTPUT_BASE [FLAGS...]\n")
        return 2
    source, base, extra = argv[0], argv[1], argv[2:]
    _tool("nanotile.translate", "-mlir-to-cudatilebc", "-no-implicit-module", source,
          "-o", f"{base}.out.tilebc")
    _tool("nanotile.translate", "-cudatilebc-to-mlir", f"{base}.out.tilebc",
          "-o", f"{base}.roundtrip.mlir", *extra)
    _tool("nanotile.opt", source, "-no-implicit-module", "-o", f"{base}.ref.mlir", *extra)
    ref, back = _content_lines(f"{base}.ref.mlir"), _content_lines(f"{base}.roundtrip.mlir")
    if ref != back:
        sys.stderr.write("round trip differs from the printed input:\n")
        sys.stderr.writelines(line + "\n" for line in difflib.unified_diff(
            ref, back, f"{base}.ref.mlir", f"{base}.roundtrip.mlir", lineterm=""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
