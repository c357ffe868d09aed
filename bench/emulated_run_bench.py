"""Where the time of ``nanotile.run(..., device="emulator")`` goes, per cuTile corpus kernel:
the interpreter's run beside the emulated run's compilation (tile pipeline + lowering to
PTX) and the PTX emulator's run, for sm_90 and sm_100, on the inputs the tests use
(tests/targets/corpus_cases.py). CPU seconds (steadier than wall time on a shared machine).

    python bench/emulated_run_bench.py [--kernels vector_add,matmul_f16]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanotile.interp import cutile_args, run
from nanotile.loader import load_file
from nanotile.ptxemu import run_ptx
from nanotile.targets.compile import compile_to_ptx
from tests.targets.corpus_cases import CORPUS, KERNELS, corpus_case


def bench(name: str) -> list[str]:
    """One row per target: interpreter, compile and emulator CPU seconds."""
    path = str(CORPUS / f"{name}.tileirbc")
    grid, args, _, _, _ = corpus_case(name, np.random.default_rng(11))
    t0 = time.process_time()
    run(path, name, grid, *cutile_args(*copy.deepcopy(args)))
    t_interp = time.process_time() - t0
    rows = []
    for target in ("sm_90", "sm_100"):
        t0 = time.process_time()
        ptx = compile_to_ptx(load_file(path), target)
        t1 = time.process_time()
        run_ptx(ptx, name, grid=grid, args=cutile_args(*copy.deepcopy(args)))
        t2 = time.process_time()
        rows.append(f"{name:<18} {t_interp:9.3f} {target:>7} {t1 - t0:10.3f} {t2 - t1:10.3f}")
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", default=",".join(KERNELS))
    names = p.parse_args().kernels.split(",")
    print(f"{'kernel':<18} {'interp s':>9} {'target':>7} {'compile s':>10} {'emulate s':>10}")
    for name in names:
        for row in bench(name):
            print(row, flush=True)


if __name__ == "__main__":
    main()
