"""Decode (and print) the whole bytecode corpus with nanotile, next to NVIDIA's tileirdisasm.

    .venv/bin/python bench/bytecode_decode.py [--jobs 1]

nanotile runs in this one process (read_bytecode, then print_module when the printer
exists, then write_bytecode for comparison); tileirdisasm runs once per file (it is a
separate program), --jobs at a time. Prints a table of wall times.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode

CORPUS = ROOT / ".." / "shared" / "corpus"


def tileirdisasm() -> Path | None:
    spec = importlib.util.find_spec("nvidia")
    for location in (spec.submodule_search_locations or []) if spec else []:
        tool = Path(location) / "cu13" / "bin" / "tileirdisasm"
        if tool.is_file():
            return tool
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1, help="tileirdisasm processes at a time")
    args = ap.parse_args()
    files = sorted(CORPUS.glob("cutile/*.tileirbc")) + sorted(
        CORPUS.glob("cutile-tests/*.tileirbc"))
    if not files:
        print("corpus not found", file=sys.stderr)
        return 2
    blobs = [f.read_bytes() for f in files]
    total_bytes = sum(map(len, blobs))
    rows = []

    t0 = time.perf_counter()
    modules = [read_bytecode(b, str(f)) for f, b in zip(files, blobs)]
    rows.append(("nanotile decode", time.perf_counter() - t0))

    try:
        from nanotile.ir.printer import print_module
    except ImportError:
        print_module = None
    if print_module is not None:
        t0 = time.perf_counter()
        for m in modules:
            print_module(m)
        decode = rows[0][1]
        rows.append(("nanotile print", time.perf_counter() - t0))
        rows.append(("nanotile decode + print", decode + rows[-1][1]))

    t0 = time.perf_counter()
    for m, b in zip(modules, blobs):
        write_bytecode(m, (b[8], b[9]))
    rows.append(("nanotile encode", time.perf_counter() - t0))

    tool = tileirdisasm()
    if tool is not None:
        def run(path: Path) -> int:
            return subprocess.run([str(tool), str(path)], check=False,
                                  capture_output=True).returncode

        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.jobs) as pool:
            failures = sum(1 for rc in pool.map(run, files) if rc)
        rows.append((f"tileirdisasm (decode + print, {args.jobs} at a time)",
                     time.perf_counter() - t0))
        if failures:
            print(f"tileirdisasm failed on {failures} files", file=sys.stderr)

    print(f"{len(files)} files, {total_bytes / 1e6:.1f} MB")
    print(f"{'stage':<44}{'seconds':>10}{'ms/file':>10}")
    for name, seconds in rows:
        print(f"{name:<44}{seconds:>10.2f}{1000 * seconds / len(files):>10.2f}")
    if print_module is None:
        print("(nanotile.ir.printer does not exist yet: decode only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
