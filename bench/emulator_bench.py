"""Speed of the PTX emulator: lane-instructions per second, and old against new.

    python bench/emulator_bench.py [--n 1048576] [--kernels vector_add,matmul_f16]
                                   [--baseline REV] [--repeat N]

Prints one row per kernel: elements, CTAs, warp instructions, lane instructions
(instructions times active lanes), wall and CPU seconds and lane-instructions per CPU
second (CPU time is steadier than wall time on a shared machine).

Kernels: ``vector_add`` (CTAs batched into wide warps), ``vector_add/warps`` (32-lane
warps, CTA by CTA), ``matmul_f16`` (tileiras' PTX from corpus/cutile/ptx), and
``corpus:NAME`` or ``corpus:NAME/warps``: a corpus/cutile-tests kernel compiled by this
tree for ``--arch`` (sm_90 or sm_100) and run on the sweep's inputs
(nanotile.passes.semantics.make_inputs), batched or warp by warp.

With ``--baseline REV`` (a git revision, e.g. HEAD) each kernel also runs on the emulator
of that revision (``git archive`` of its nanotile/ into a temporary folder), in the same
process pair, alternating old and new ``--repeat`` times on the same PTX and inputs; the
rows say which, and a last column gives old CPU time / new CPU time. The results of the
two emulators must be bit for bit equal (outputs and lane-instruction counts).
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PTX = ROOT / ".." / "shared" / "corpus" / "cutile" / "ptx"
CUTILE_TESTS = ROOT / ".." / "shared" / "corpus" / "cutile-tests"


# ---------------------------------------------------------------- the kernels (one job each)

def vector_add_job(n: int, arch: str, batch: bool) -> dict:
    a = np.random.default_rng(0).standard_normal(n, np.float32)
    b = np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    return {"ptx": (PTX / f"vector_add.{arch}.ptx").read_text(), "kernel": "vector_add",
            "grid": (-(-n // 1024),), "args": [a, n, 1, b, n, 1, c, n, 1], "batch": batch,
            "size": n, "want": [None, None, None, None, None, None, a + b, None, None]}


def matmul_job(n: int, arch: str) -> dict:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    c = np.zeros((n, n), np.float16)
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    return {"ptx": (PTX / f"matmul_f16.{arch}.ptx").read_text(), "kernel": "matmul_f16",
            "grid": (-(-n // 128), -(-n // 128)), "batch": True, "size": n,
            "args": [a, n, n, n, 1, b, n, n, n, 1, c, n, n, n, 1], "close": {10: ref}}


def corpus_job(name: str, arch: str, batch: bool) -> dict:
    """A cutile-tests kernel compiled by this tree, on the sweep's inputs."""
    import nanotile
    from nanotile.passes.semantics import make_inputs
    from nanotile.targets.compile import compile_to_ptx

    module = nanotile.load(str(CUTILE_TESTS / f"{name}.tileirbc"))
    (entry,) = module.entries()
    grid, args = make_inputs(entry, np.random.default_rng(0))
    return {"ptx": compile_to_ptx(module, arch), "kernel": entry.attributes["sym_name"],
            "grid": tuple(grid), "args": args, "batch": batch,
            "size": sum(a.size for a in args if isinstance(a, np.ndarray))}


def make_job(name: str, opts) -> dict:
    if name in ("vector_add", "vector_add/warps"):
        return vector_add_job(opts.n, opts.arch, batch=name == "vector_add")
    if name == "matmul_f16":
        return matmul_job(opts.matmul_n, opts.arch)
    if name.startswith("corpus:"):
        stem, _, mode = name.removeprefix("corpus:").partition("/")
        return corpus_job(stem, opts.arch, batch=mode != "warps")
    raise SystemExit(f"unknown kernel {name}")


# ---------------------------------------------------------------- running one job

def run_job(job: dict) -> dict:
    """Run a job on the emulator importable here; its statistics, times and outputs."""
    from nanotile.ptxemu import PtxError, run_ptx

    args = [a.copy() if isinstance(a, np.ndarray) else a for a in job["args"]]
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        stats = run_ptx(job["ptx"], job["kernel"], grid=job["grid"], args=args,
                        batch=job["batch"])
    except PtxError as exc:
        return {"error": str(exc)}
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    for i, want in enumerate(job.get("want", [])):
        if want is not None:
            assert np.array_equal(args[i], want), f"{job['kernel']}: result mismatch"
    for i, ref in job.get("close", {}).items():
        assert np.allclose(args[i].astype(np.float32), ref.astype(np.float32), rtol=1e-2,
                           atol=1e-2), f"{job['kernel']}: result mismatch"
    return {"instructions": int(stats.instructions),
            "lane_instructions": int(stats.lane_instructions), "wall": secs, "cpu": cpu,
            "outputs": [a.tobytes().hex() for a in args if isinstance(a, np.ndarray)]}


def worker() -> int:
    """--worker: read pickled jobs on stdin, one JSON line of results per job and run."""
    jobs, repeat = pickle.load(sys.stdin.buffer)
    import nanotile

    print(f"nanotile from {Path(nanotile.__file__).parent}", file=sys.stderr)
    for job in jobs:
        for _ in range(repeat):
            print(json.dumps(run_job(job)), flush=True)
    return 0


def baseline_tree(rev: str, where: Path) -> Path:
    """nanotile/ of git revision ``rev``, unpacked under ``where``."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "nanotile"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(data)) as tar:
        tar.extractall(where, filter="data")
    return where


class Worker:
    """A Python process with another tree's nanotile first on its path."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree

    def run(self, job: dict) -> dict:
        # importing this module puts this tree first on the path: the other goes before it
        code = (f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); "
                f"import emulator_bench; sys.path.insert(0, {str(self.tree)!r}); "
                "sys.exit(emulator_bench.worker())")
        out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(([job], 1)),
                             capture_output=True, check=False)
        lines = out.stdout.decode().splitlines()
        if out.returncode or not lines:
            return {"error": out.stderr.decode()[-500:]}
        source = out.stderr.decode().splitlines()[0].removeprefix("nanotile from ")
        assert Path(source) == self.tree / "nanotile", f"ran {source}, not {self.tree}"
        return json.loads(lines[-1])


def row(label: str, size: int, ctas: int, r: dict, extra: str = "") -> str:
    if "error" in r:
        return f"{label:<34} does not run: {r['error'].strip().splitlines()[-1]}"
    return (f"{label:<34} {size:>9} {ctas:>6} {r['instructions']:>11} "
            f"{r['lane_instructions']:>12} {r['wall']:>7.2f} {r['cpu']:>7.2f} "
            f"{r['lane_instructions'] / max(r['cpu'], 1e-9):>17.3e}{extra}")


def main() -> int:
    if "--worker" in sys.argv:
        return worker()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="vector_add elements")
    ap.add_argument("--matmul-n", type=int, default=256, help="matmul size (n x n x n)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--kernels", default="vector_add,vector_add/warps,matmul_f16",
                    help="vector_add (CTAs batched into wide warps), vector_add/warps "
                         "(32-lane warps, CTA by CTA), matmul_f16, corpus:NAME[/warps]")
    ap.add_argument("--baseline", metavar="REV",
                    help="also run each kernel on the emulator of this git revision")
    ap.add_argument("--repeat", type=int, default=1,
                    help="with --baseline: old and new runs per kernel, alternating")
    opts = ap.parse_args()
    print(f"{'kernel':<34} {'size':>9} {'CTAs':>6} {'warp-instr':>11} {'lane-instr':>12} "
          f"{'wall s':>7} {'cpu s':>7} {'lane-instr/cpu-s':>17}"
          + ("  old/new cpu" if opts.baseline else ""))
    with tempfile.TemporaryDirectory() as tmp:
        old = Worker(baseline_tree(opts.baseline, Path(tmp))) if opts.baseline else None
        new = Worker(ROOT)
        for name in opts.kernels.split(","):
            job = make_job(name, opts)
            grid = tuple(job["grid"]) + (1, 1)
            ctas = grid[0] * grid[1] * grid[2]
            if old is None:
                print(row(name, job["size"], ctas, run_job(job)), flush=True)
                continue
            for _ in range(opts.repeat):
                r_old, r_new = old.run(job), new.run(job)
                same = ("error" in r_old or "error" in r_new
                        or (r_old["outputs"] == r_new["outputs"]
                            and r_old["lane_instructions"] == r_new["lane_instructions"]))
                speedup = (f"  {r_old['cpu'] / max(r_new['cpu'], 1e-9):11.2f}x"
                           if "error" not in r_old and "error" not in r_new else "")
                print(row(f"{name} [{opts.baseline}]", job["size"], ctas, r_old), flush=True)
                print(row(f"{name} [new]", job["size"], ctas, r_new, speedup), flush=True)
                if not same:
                    print(f"{name}: the two emulators' results DIFFER", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
