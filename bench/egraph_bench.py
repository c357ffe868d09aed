"""Equality saturation cost versus DAG size: random tile-op DAGs of about 100, 1,000 and
10,000 ops, then every cuTile corpus kernel. For each: ops in the dataflow, e-nodes after
saturation, rounds (and why they stopped), and seconds to encode, insert, saturate
(all non-contracting rulesets), extract (greedy DAG, all roots at once) and rebuild.

    .venv/bin/python bench/egraph_bench.py [--sizes 100,1000,10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nanotile.egraph.bridge import Encoder
from nanotile.egraph.cost import CostModel
from nanotile.egraph.engine import Limits, Program, Stats, builtin_rule_files
from nanotile.egraph.optimize import _rebuild
from nanotile.ir.core import Module
from nanotile.ir.parser import parse_text
from nanotile.ir.rewrite import blocks_of, collect_uses
from nanotile.passes.eqsat import CONTRACTING

CORPUS = (REPO / ".." / "shared" / "corpus" / "cutile").resolve()
T = "tile<16x16xf32>"
TI = "tile<16x16xi32>"


def random_kernel(ops: int, seed: int) -> str:
    """A kernel of ``ops`` pure ops on f32 and i32 tiles (operands drawn from the last 40
    values of each kind, so values are shared) whose last values are stored."""
    rng = random.Random(seed)
    lines = [f"    %c2 = constant <f32: 2.0> : {T}", f"    %c1 = constant <f32: 1.0> : {T}",
             f"    %i8 = constant <i32: 8> : {TI}", f"    %i0 = constant <i32: 0> : {TI}",
             f"    %i4 = constant <i32: 4> : {TI}",
             "    %x = reshape %s : tile<f32> -> tile<1x1xf32>",
             f"    %f0 = broadcast %x : tile<1x1xf32> -> {T}",
             "    %g0 = iota : tile<16xi32>",
             "    %g1 = reshape %g0 : tile<16xi32> -> tile<1x16xi32>",
             f"    %n0 = broadcast %g1 : tile<1x16xi32> -> {TI}"]
    floats, ints = ["%f0", "%c2", "%c1"], ["%n0", "%i8", "%i0", "%i4"]
    for k in range(ops):
        if rng.random() < 0.6:
            a, b = (rng.choice(floats[-40:]) for _ in range(2))
            op = rng.choice(["mulf", "addf", "subf", "negf"])
            body = f"negf {a} : {T}" if op == "negf" else f"{op} {a}, {b} : {T}"
            lines.append(f"    %f{k + 1} = {body}")
            floats.append(f"%f{k + 1}")
        else:
            a, b = (rng.choice(ints[-40:]) for _ in range(2))
            op = rng.choice(["muli", "addi", "subi", "andi", "xori"])
            lines.append(f"    %n{k + 1} = {op} {a}, {b} : {TI}")
            ints.append(f"%n{k + 1}")
    stores = []
    for j, v in enumerate(floats[-4:]):
        stores.append(f"    %t{j} = store_ptr_tko weak %pp, {v} : tile<16x16xptr<f32>>, "
                      f"{T} -> token")
    for j, v in enumerate(ints[-4:]):
        stores.append(f"    %u{j} = store_ptr_tko weak %qq, {v} : tile<16x16xptr<i32>>, "
                      f"{TI} -> token")
    head = ["cuda_tile.module @bench {",
            "  entry @k(%p: tile<ptr<f32>>, %q: tile<ptr<i32>>, %s: tile<f32>) {",
            "    %p1 = reshape %p : tile<ptr<f32>> -> tile<1x1xptr<f32>>",
            "    %pp = broadcast %p1 : tile<1x1xptr<f32>> -> tile<16x16xptr<f32>>",
            "    %q1 = reshape %q : tile<ptr<i32>> -> tile<1x1xptr<i32>>",
            "    %qq = broadcast %q1 : tile<1x1xptr<i32>> -> tile<16x16xptr<i32>>"]
    return "\n".join(head + lines + stores + ["    return", "  }", "}", ""])


def measure(module: Module) -> dict[str, object]:
    """One e-graph per item, as the eqsat pass does; times summed over items."""
    row: dict[str, object] = {"ops": 0, "enodes": 0, "rounds": "", "encode": 0.0,
                              "insert": 0.0, "saturate": 0.0, "extract": 0.0,
                              "rebuild": 0.0}
    for item in [i for i in module.items if i.regions]:
        start = time.perf_counter()
        enc = Encoder({}, collect_uses(module))
        for block in blocks_of(item):
            enc.encode_block(block)
        row["encode"] += time.perf_counter() - start
        row["ops"] += len(enc.names)
        program = Program(CostModel(), builtin_rule_files())
        start = time.perf_counter()
        program.run_text("\n".join(enc.lines), "<terms>")
        row["insert"] += time.perf_counter() - start
        stats = Stats()
        start = time.perf_counter()
        program.saturate([r for r in program.rulesets if r not in CONTRACTING], Limits(),
                         stats)
        row["saturate"] += time.perf_counter() - start
        row["rounds"] = f"{stats.iterations} ({stats.stop_reason})"
        row["enodes"] += program.node_count()
        start = time.perf_counter()
        termdag, terms = program.extract([enc.names[r] for r in enc.roots])
        row["extract"] += time.perf_counter() - start
        start = time.perf_counter()
        if enc.roots:
            _rebuild(module, item, enc, termdag, terms)
        row["rebuild"] += time.perf_counter() - start
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    cases: list[tuple[str, Module]] = []
    for size in (int(s) for s in args.sizes.split(",") if s):
        cases.append((f"random {size}", parse_text(random_kernel(size, args.seed), "r")))
    from nanotile.loader import load_file

    for path in sorted(CORPUS.glob("*.tileirbc")):
        if "13_" not in path.name:
            cases.append((path.stem, load_file(str(path))))
    measure(parse_text(random_kernel(20, 1), "warm-up"))  # imports, first e-graph
    columns = ["encode", "insert", "saturate", "extract", "rebuild"]
    print(f"{'DAG':24s} {'ops':>6s} {'e-nodes':>8s} {'rounds':>18s} "
          + " ".join(f"{c:>9s}" for c in columns) + f" {'total s':>8s}")
    for name, module in cases:
        row = measure(module)
        total = sum(float(row[c]) for c in columns)
        print(f"{name:24s} {row['ops']:6d} {row['enodes']:8d} {row['rounds']:>18s} "
              + " ".join(f"{float(row[c]):9.4f}" for c in columns) + f" {total:8.3f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
