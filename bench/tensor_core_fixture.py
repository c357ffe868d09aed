"""Write tests/ptxemu/data/tensor_core_sums.npz: tensor-core sums measured on a GPU.

    .venv/bin/python bench/gpu_check.py prepare DIR --mma-rounding --only rounding
    python3 bench/gpu_check.py run DIR --save SAVED                # on the GPU machine
    .venv/bin/python bench/tensor_core_fixture.py DIR SAVED [--emulated-ok NAME ...]

For each rounding_* case of DIR (operands A (m x k), B (k x m), an f32 C; D = C + A @ B
on mma.sync for m = 32, wgmma otherwise) the fixture keeps a few outputs, those where
the device and the IEEE sum differ first: for output (i, j), row i of A, column j of B,
C[i, j] and the device's D[i, j] as bits (three cases whole). A case the device computed
as the emulator did was not saved by ``run --save``; name it with --emulated-ok to take
the emulator's outputs (which ``run`` reported bit-identical to the device's).
tests/ptxemu/test_tensor_core_sums.py checks nanotile.ptxemu.tensor_core_sums against the
fixture.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "tests" / "ptxemu" / "data" / "tensor_core_sums.npz"
KINDS = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
# outputs kept per case: one instruction's K, several instructions
KEPT = {"single": 32, "chain": 8}
# cases kept whole (name/full_a, full_b, full_c, full_d), for a run of a compiled kernel
WHOLE = ("rounding_f16_m64k16", "rounding_f8E4M3FN_m64k32", "rounding_f8E5M2_m32k32")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prepared", type=Path)
    parser.add_argument("saved", type=Path)
    parser.add_argument("--emulated-ok", action="append", default=[], metavar="NAME")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    arrays = {}
    for case in json.loads((args.prepared / "manifest.json").read_text()):
        name = case["name"]
        if not name.startswith("rounding_"):
            continue
        data = np.load(args.prepared / f"{name}.npz")
        saved = args.saved / f"{name}.npz"
        if saved.exists():
            device = np.load(saved)["got3"]
        elif name in args.emulated_ok:
            device = data["emu3"]
        else:
            print(f"{name}: no device outputs, skipped")
            continue
        arrays |= _case_arrays(name, case, data, device)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUTPUT, **arrays)
    cases = sum(key.endswith("/kind") for key in arrays)
    print(f"{OUTPUT}: {cases} cases, {OUTPUT.stat().st_size} bytes")
    return 0


def _case_arrays(name: str, case: dict, data, device: np.ndarray) -> dict:
    """name/a, name/b (operand bits, one row per kept output), name/c, name/d (f32 bits)
    and name/kind (the PTX type and the instruction); the cases of WHOLE whole too."""
    import ml_dtypes

    kind = name.split("_")[1]
    types = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
             "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}
    a_bits, b_bits, c = data["arg0"], data["arg1"], data["arg2"]
    a = a_bits.view(types[kind]).astype(np.float64)
    b = b_bits.view(types[kind]).astype(np.float64)
    ieee = (a @ b + c.astype(np.float64)).astype(np.float32)
    rng = np.random.default_rng(0)
    differ = rng.permutation(np.argwhere(ieee.view(np.uint32) != device.view(np.uint32)))
    same = rng.permutation(np.argwhere(ieee.view(np.uint32) == device.view(np.uint32)))
    count = KEPT["single" if a.shape[1] <= 32 else "chain"]
    differ = differ[:count - count // 4]
    chosen = np.concatenate([differ, same[:count - len(differ)]])
    rows, cols = chosen[:, 0], chosen[:, 1]
    instruction = "mma.sync" if a.shape[0] == 32 else "wgmma"
    arrays = {f"{name}/a": a_bits[rows], f"{name}/b": b_bits[:, cols].T.copy(),
              f"{name}/c": c[rows, cols], f"{name}/d": device[rows, cols],
              f"{name}/kind": np.array(f"{KINDS[kind]} {instruction}")}
    if name in WHOLE:
        arrays |= {f"{name}/full_a": a_bits, f"{name}/full_b": b_bits, f"{name}/full_c": c,
                   f"{name}/full_d": device}
    return arrays


if __name__ == "__main__":
    sys.exit(main())
