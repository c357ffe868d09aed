"""Fuzz the bytecode reader (and the writer on what it reads) with mutated corpus files.

    .venv/bin/python bench/bytecode_fuzz.py [--inputs 100000] [--seed 1]

Each input is a corpus file with 1-3 random mutations (mostly bit flips and byte
overwrites; also insertions, deletions, truncation, a huge varint). Reports how many inputs decoded, how
many were rejected with a CompileError, any other exception (a bug), the slowest input
(wall and CPU time: on a busy machine a wall-time spike is the scheduler, not the
reader), the 99.9th percentile and the peak memory. Exit status 1 if any input raised something else than CompileError.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.diagnostics import CompileError

CORPUS = ROOT / ".." / "shared" / "corpus"


KINDS = (0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5)


def mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3))):
        if not buf:
            break
        i = rng.randrange(len(buf))
        # Mostly in-place edits: a change of length breaks the section framing at once,
        # while in-place edits reach the tables, types, attributes and op streams.
        kind = rng.choice(KINDS)
        if kind == 0:
            buf[i] ^= 1 << rng.randrange(8)
        elif kind == 1:
            buf[i] = rng.randrange(256)
        elif kind == 2:
            buf[i:i] = rng.randbytes(rng.randint(1, 8))
        elif kind == 3:
            del buf[i:i + rng.randint(1, 16)]
        elif kind == 4:
            del buf[i:]
        else:
            buf[i:i + 1] = b"\xff" * rng.randint(1, 9) + b"\x01"
    return bytes(buf)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    files = sorted(CORPUS.glob("cutile/*.tileirbc")) + sorted(
        CORPUS.glob("cutile-tests/*.tileirbc"))
    seeds = [f.read_bytes() for f in files]
    if not seeds:
        print("corpus not found", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    decoded = rejected = crashed = 0
    worst, worst_size = 0.0, 0
    worst_cpu = 0.0
    times: list[float] = []
    start = time.perf_counter()
    for _ in range(args.inputs):
        data = mutate(rng, rng.choice(seeds))
        t0 = time.perf_counter()
        c0 = time.process_time()
        try:
            module = read_bytecode(data, "fuzz")
            decoded += 1
            try:
                write_bytecode(module, (data[8], data[9]))
            except CompileError:
                pass
        except CompileError:
            rejected += 1
        except Exception:  # noqa: BLE001 - anything but CompileError is a bug to report
            crashed += 1
            if crashed <= 5:
                traceback.print_exc()
        dt = time.perf_counter() - t0
        worst_cpu = max(worst_cpu, time.process_time() - c0)
        times.append(dt)
        if dt > worst:
            worst, worst_size = dt, len(data)
    total = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'inputs':<24}{args.inputs:>12}")
    print(f"{'decoded':<24}{decoded:>12}")
    print(f"{'rejected (CompileError)':<24}{rejected:>12}")
    print(f"{'other exceptions':<24}{crashed:>12}")
    print(f"{'total seconds':<24}{total:>12.1f}")
    print(f"{'mean ms / input':<24}{1000 * total / args.inputs:>12.3f}")
    print(f"{'worst ms / input':<24}{1000 * worst:>12.1f}  ({worst_size} bytes, wall)")
    print(f"{'worst CPU ms / input':<24}{1000 * worst_cpu:>12.1f}")
    times.sort()
    print(f"{'99.9th pct ms / input':<24}{1000 * times[int(0.999 * (len(times) - 1))]:>12.1f}")
    print(f"{'peak RSS MiB':<24}{peak_mib:>12.1f}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
