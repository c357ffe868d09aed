"""nanotile against NVIDIA's tileiras, kernel by kernel: CPU time and peak memory of a
compile to a cubin, on the same machine in the same run.

For every kernel of ../shared/corpus/cutile and ../shared/corpus/cutile-tests (or an
evenly spaced ``--sample N`` of the latter, or the files of both named by ``-k``) and each
target:

- tileiras: ``tileiras --gpu-name=T K -o K.cubin`` (CPU seconds of the process, peak RSS);
- nanotile CLI: ``nanotile K --gpu-name=T -o K.cubin``, a fresh process per kernel
  (start-up included; ptxas counted, it is a child; NANOTILE_NO_SERVER set);
- nanotile CLI with the compile server: the same command while ``nanotile server`` runs
  (nanotile/server.py, on a socket of this run's own): the CPU of the command's process
  plus the CPU the server spent on its request (ptxas included), which the server reports
  (NANOTILE_SERVER_STATS); the server's start-up and its whole CPU over the run are
  printed too, and its peak memory is compared with tileiras';
- nanotile in-process: in one warm process (imports done, rules loaded, the warm state
  frozen out of the garbage collector's way as the compile server does), the default
  pipeline to PTX (CPU seconds), then ptxas; with the share of each stage (tile passes,
  eqsat, the back end's lowering, PTX passes, ptxas);
- nanotile batch: ``nanotile K1 K2 ... -j 1 --emit=cubin -o DIR`` over all the kernels,
  one process: the start-up paid once (total only).

Then per target: the median and worst ratio nanotile/tileiras of CPU time (CLI and
in-process) and of peak memory (CLI), against the goals (issue 17): CLI median <= 1.0x and
no kernel over 2x, in-process median <= 0.3x, memory <= 2x on every kernel. Ratios are
over the kernels both compile. ``--csv FILE`` keeps every measurement; the kernels with
the worst ratios are listed.

    .venv/bin/python bench/compile_vs_tileiras.py [--sample N | -k NAME ...]
        [--targets sm_90,sm_100] [--jobs J] [--repeat N] [--csv FILE]
        [--skip cli,batch,inprocess]

Run on a quiet machine (``--jobs`` runs kernels side by side: faster, noisier;
``--repeat N`` keeps the least CPU time of N runs of each command, both tools alike).
NVIDIA's tools come with nanotile's test extras. Python bytecode caches are allowed
(PYTHONDONTWRITEBYTECODE is dropped for the nanotile runs): a user's install has them.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = (ROOT / ".." / "shared" / "corpus").resolve()
BIN = Path(sys.executable).parent
GOALS = {"cli_median": 1.0, "cli_worst": 2.0, "inprocess_median": 0.3, "memory_worst": 2.0}
STAGES = {  # pass name -> stage (anything else: tile passes)
    "eqsat": "eqsat", **{name: "lowering" for name in (
        "lower-constants", "assign-layouts", "vectorize-memory", "lower-reductions",
        "remove-layout-conversions", "lower-convert-layout", "allocate-shared",
        "insert-barriers", "distribute", "lower-mma", "simplify-picks",
        "widen-narrow-floats", "simt-cse", "simt-dce", "select-instructions")},
}


def kernels(sample: int | None, names: list[str]) -> list[Path]:
    """corpus/cutile and (a sample of) cutile-tests; with ``names``, only the files whose
    name holds one of those substrings (the whole of both corpora searched)."""
    files = sorted((CORPUS / "cutile").glob("*.tileirbc"))
    tests = sorted((CORPUS / "cutile-tests").glob("*.tileirbc"))
    if names:
        return [p for p in files + tests if any(n in p.name for n in names)]
    if sample is not None:
        tests = tests[::max(1, len(tests) // sample)][:sample] if sample else []
    return files + tests


def tool(name: str) -> Path:
    import nvidia

    for root in nvidia.__path__:
        path = Path(root) / "cu13" / "bin" / name
        if path.exists():
            return path
    raise SystemExit(f"{name} not found (pip install -e '.[oracles]')")


def measured(cmd: list[str], timeout: float, env: dict | None = None) -> dict:
    """Run ``cmd``: exit status, CPU seconds (user + system, its children included) and
    peak resident memory in MB (the largest of it and its children)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"rc": proc.returncode, "cpu": usage.ru_utime + usage.ru_stime,
            "rss": usage.ru_maxrss / 1024}


def least(runs: list[dict]) -> dict:
    """Of a command's repeated runs, the one that took the least CPU time (a busy machine
    only adds time; ``--repeat``), with the largest peak memory of them all."""
    timed = [run for run in runs if run["cpu"] is not None]
    best = dict(min(timed, key=lambda run: run["cpu"]) if timed else runs[0])
    best["rss"] = max(run["rss"] for run in runs)
    return best


def served(nanotile: Path, path: Path, target: str, out: str, timeout: float,
           env: dict) -> dict:
    """One compile through the compile server: the client's measures, and its CPU plus
    what the server reports it spent on the request (None if it reported nothing)."""
    stats = f"{out}.stats"
    run = measured([str(nanotile), str(path), f"--gpu-name={target}", "-o", f"{out}.s.cubin"],
                   timeout, {**env, "NANOTILE_SERVER_STATS": stats})
    spent = server_seconds(stats)
    return {**run, "client": run["cpu"], "cpu": None if spent is None else run["cpu"] + spent}


def start_server(nanotile: Path, env: dict) -> dict:
    """Start a compile server for this run; its start-up CPU."""
    subprocess.run([str(nanotile), "server", "start"], env=env, check=True,
                   capture_output=True)
    return {"start_cpu": server_status(nanotile, env)["cpu"]}


def stop_server(nanotile: Path, env: dict, server: dict) -> dict | None:
    """Its CPU over the run (start-up excluded), requests and peak memory; stop it. None
    (with a note) when it is gone: a server stops when nanotile's files change, so an
    edit during the run ends it, and the commands after it compiled without it."""
    status = server_status(nanotile, env)
    subprocess.run([str(nanotile), "server", "stop"], env=env, capture_output=True)
    if status is None:
        print("\nthe compile server was gone at the end of the run (nanotile's files "
              "changed?): its totals are missing, and the rows after it compiled without it")
        return None
    return {**server, "cpu": status["cpu"] - server["start_cpu"],
            "requests": status["requests"], "memory_mb": status["memory_mb"]}


def server_status(nanotile: Path, env: dict) -> dict:
    sys.path.insert(0, str(ROOT))
    from nanotile.server import ask

    return ask(env["NANOTILE_SERVER_SOCKET"], {"command": "status"})


def server_seconds(stats: str) -> float | None:
    """What the server reported spending on a request (None: it did not serve it)."""
    try:
        return sum(float(line) for line in Path(stats).read_text().split())
    except OSError:
        return None


def nanotile_env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# ---- in-process: a worker that compiles the kernels it is sent, warm ----------------

def worker(target: str) -> None:
    """Read kernel paths on stdin; write one JSON line of measurements per kernel."""
    import io
    import resource

    sys.path.insert(0, str(ROOT))
    import nanotile.targets  # noqa: F401
    from nanotile.diagnostics import CompileError
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets.compile import assemble

    def children_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    class CpuTimedRun(PipelineRun):
        """The pipeline run with each pass timed in CPU seconds (the machine is shared)."""

        def _timed(self, name, action):
            start = time.process_time()
            try:
                return action()
            finally:
                self.options.timings.append((name, time.process_time() - start))

    def compile_one(path: str) -> dict:
        start = time.process_time()
        module = load_file(path)
        options = RunOptions(time_passes=True)
        CpuTimedRun(options, io.StringIO()).run(module, parse_pipeline(
            default_pipeline(target)))
        ptx = module.ptx.render()
        cpu = time.process_time() - start
        before = children_cpu()
        assemble(ptx, target)
        stages: dict[str, float] = {}
        for name, seconds in options.timings:
            stage = STAGES.get(name, "ptx passes" if name.startswith("ptx-") else
                               "tile passes")
            stages[stage] = stages.get(stage, 0.0) + seconds
        return {"rc": 0, "cpu": cpu, "ptxas": children_cpu() - before, "stages": stages}

    import contextlib

    from nanotile.driver import freeze_warm_state
    from nanotile.server import warm_up

    with contextlib.redirect_stdout(sys.stderr):  # stdout carries the measurements
        warm_up()  # as the compile server warms up, then freezes what it built
    freeze_warm_state()
    for line in sys.stdin:
        path = line.strip()
        try:
            result = compile_one(path)
        except CompileError:
            result = {"rc": 1}
        except Exception as e:  # noqa: BLE001 - a crash is a result to report
            result = {"rc": 2, "error": f"{type(e).__name__}: {e}"[:200]}
        print(json.dumps(result), flush=True)


def in_process(paths: list[Path], target: str) -> dict[str, dict]:
    proc = subprocess.Popen([sys.executable, __file__, "--worker", target],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=nanotile_env())
    out = {}
    for n, path in enumerate(paths, 1):
        proc.stdin.write(f"{path}\n")
        proc.stdin.flush()
        out[path.stem] = json.loads(proc.stdout.readline())
        progress(f"in-process {target}", n, len(paths))
    proc.stdin.close()
    proc.wait()
    return out


def progress(what: str, done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\r{what}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr,
              flush=True)


# ---- the report ----------------------------------------------------------------------

def ratios(rows: list[dict], key: str, base: str) -> list[tuple[float, str]]:
    return sorted(((r[key] / r[base], r["kernel"]) for r in rows
                   if r.get(key) is not None and r.get(base)), reverse=True)


def summary(rows: list[dict], target: str, batch: dict | None,
            server: dict | None) -> None:
    both = [r for r in rows if r["tileiras_rc"] == 0 and r.get("cli_rc", 0) == 0
            and r.get("inprocess_rc", 0) == 0 and r.get("server_rc", 0) == 0]
    print(f"\n### {target}: {len(rows)} kernels, {len(both)} compiled by both\n")
    total = {k: sum(r.get(k) or 0 for r in both) for k in
             ("tileiras_cpu", "cli_cpu", "inprocess_cpu", "inprocess_ptxas",
              "server_cpu")}
    cli = ratios(both, "cli_cpu", "tileiras_cpu")
    served = ratios(both, "server_cpu", "tileiras_cpu")
    inproc = [(r["inprocess_total"] / r["tileiras_cpu"], r["kernel"]) for r in both
              if r.get("inprocess_total") is not None and r["tileiras_cpu"]]
    inproc.sort(reverse=True)
    memory = ratios(both, "cli_rss", "tileiras_rss")
    print("| measure | total CPU s | median ratio | worst ratio (kernel) | kernels over 2x "
          "| goal |")
    print("|---|---:|---:|---|---:|---|")
    print(f"| tileiras | {total['tileiras_cpu']:.1f} | 1 | | | |")
    if cli:
        print(f"| nanotile CLI (fresh process per kernel) | {total['cli_cpu']:.1f} | "
              f"{statistics.median(x for x, _ in cli):.2f}x | {cli[0][0]:.2f}x "
              f"({cli[0][1][:60]}) | {sum(x > 2 for x, _ in cli)} | median <= "
              f"{GOALS['cli_median']}x, none over {GOALS['cli_worst']}x |")
    if served:
        print(f"| nanotile CLI, compile server running | {total['server_cpu']:.1f} | "
              f"{statistics.median(x for x, _ in served):.2f}x | {served[0][0]:.2f}x "
              f"({served[0][1][:60]}) | {sum(x > 2 for x, _ in served)} | median <= "
              f"{GOALS['cli_median']}x, none over {GOALS['cli_worst']}x |")
    to_ptx = ratios(both, "inprocess_cpu", "tileiras_cpu")
    if to_ptx:
        print(f"| nanotile in-process to PTX | {total['inprocess_cpu']:.1f} | "
              f"{statistics.median(x for x, _ in to_ptx):.2f}x | {to_ptx[0][0]:.2f}x "
              f"({to_ptx[0][1][:60]}) | {sum(x > 2 for x, _ in to_ptx)} | median <= "
              f"{GOALS['inprocess_median']}x |")
    if inproc:
        print(f"| nanotile in-process to PTX, then ptxas | "
              f"{total['inprocess_cpu'] + total['inprocess_ptxas']:.1f} | "
              f"{statistics.median(x for x, _ in inproc):.2f}x | {inproc[0][0]:.2f}x "
              f"({inproc[0][1][:60]}) | {sum(x > 2 for x, _ in inproc)} | |")
    if batch is not None and batch["n"]:
        tileiras_all = sum(r["tileiras_cpu"] for r in rows if r["tileiras_rc"] == 0)
        print(f"| nanotile batch (one process, {batch['n']} kernels, rc {batch['rc']}) | "
              f"{batch['cpu']:.1f} | {batch['cpu'] / max(tileiras_all, 1e-9):.2f}x of "
              f"tileiras' total | | | |")
    if memory:
        print(f"\npeak memory, nanotile CLI / tileiras: median "
              f"{statistics.median(x for x, _ in memory):.2f}x, worst {memory[0][0]:.2f}x "
              f"({memory[0][1][:70]}), kernels over {GOALS['memory_worst']}x: "
              f"{sum(x > GOALS['memory_worst'] for x, _ in memory)} (tileiras median "
              f"{statistics.median(r['tileiras_rss'] for r in both):.0f} MB, nanotile "
              f"median {statistics.median(r['cli_rss'] for r in both if r.get('cli_rss')):.0f}"
              " MB)")
    shares: dict[str, float] = {}
    for r in both:
        for stage, seconds in (r.get("stages") or {}).items():
            shares[stage] = shares.get(stage, 0.0) + seconds
    if shares:
        shares["ptxas"] = total["inprocess_ptxas"]
        whole = sum(shares.values()) or 1.0
        print("\nin-process time by stage (the lowering is the back end's, being rebuilt): "
              + ", ".join(f"{stage} {100 * seconds / whole:.1f}%" for stage, seconds in
                          sorted(shares.items(), key=lambda kv: -kv[1])))
    refused = [r["kernel"] for r in rows if r["tileiras_rc"] == 0 and
               (r.get("cli_rc", 0) != 0 or r.get("inprocess_rc", 0) != 0 or
                r.get("server_rc", 0) != 0)]
    if refused:
        print(f"\ncompiled by tileiras, not by nanotile: {len(refused)} (e.g. "
              f"{', '.join(k[:50] for k in refused[:3])})")
    if server:
        worst = max(r["tileiras_rss"] for r in both) if both else 0
        missed = sum(r.get("server_rc") == 0 and r.get("server_cpu") is None for r in rows)
        per_request = sum(r["server_cpu"] - r["server_client_cpu"] for r in rows
                          if r.get("server_cpu") is not None)
        largest = max((r["server_rss"] for r in rows if r.get("server_rss")), default=0)
        print(f"\ncompile server: {missed} commands compiled without it; start-up "
              f"{server['start_cpu']:.2f} s CPU (once), {server['cpu']:.1f} s CPU in all "
              f"over the run ({server['requests']} requests; the per-request figures above "
              f"sum to {per_request:.1f} s), peak memory {server['memory_mb']} MB: "
              f"{server['memory_mb'] / max(worst, 1):.2f}x tileiras' largest ({worst:.0f} "
              f"MB), the command's own at most {largest:.0f} MB")
    for label, table in (("CLI", cli), ("CLI, server", served), ("in-process", inproc)):
        if table:
            print(f"\nworst {label} ratios: " + "; ".join(f"{x:.1f}x {k[:60]}"
                                                          for x, k in table[:5]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=None,
                        help="cutile-tests kernels to take, evenly spaced (default: all)")
    parser.add_argument("-k", dest="names", action="append", default=[],
                        help="only the kernels whose file name contains this (repeatable)")
    parser.add_argument("--targets", default="sm_90,sm_100")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--repeat", type=int, default=1,
                        help="run tileiras and nanotile's commands this many times, in "
                             "turn, keeping each one's least CPU time (default 1)")
    parser.add_argument("--skip", default="",
                        help="comma list of: cli, server, batch, inprocess")
    parser.add_argument("--csv", help="write every measurement to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return 0
    skip = set(filter(None, args.skip.split(",")))
    paths = kernels(args.sample, args.names)
    tileiras = tool("tileiras")
    nanotile = BIN / "nanotile"
    env = {**nanotile_env(), "NANOTILE_NO_SERVER": "1"}
    subprocess.run([str(nanotile), "--help"], env=env, capture_output=True, check=False)
    all_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server_env = {**nanotile_env(), "NANOTILE_SERVER_SOCKET": f"{tmp}/server.sock"}
        for target in args.targets.split(","):
            server = None if "server" in skip else start_server(nanotile, server_env)
            def one(path: Path, target: str = target) -> dict:
                # unique per kernel: variants of one kernel can share their first 100
                # characters, and the server appends to the stats file it is given
                digest = hashlib.sha1(path.stem.encode()).hexdigest()[:8]
                out = Path(tmp) / f"{path.stem[:80]}-{digest}.{target}"
                row = {"kernel": path.stem, "target": target}
                runs: dict[str, list[dict]] = {"t": [], "n": [], "s": []}
                for repeat in range(args.repeat):  # the tools take turns
                    runs["t"].append(measured([str(tileiras), f"--gpu-name={target}",
                                               str(path), "-o", f"{out}.t.cubin"],
                                              args.timeout))
                    if "cli" not in skip:
                        runs["n"].append(measured([str(nanotile), str(path),
                                                   f"--gpu-name={target}", "-o",
                                                   f"{out}.n.cubin"], args.timeout, env))
                    if server is not None:
                        runs["s"].append(served(nanotile, path, target, f"{out}.{repeat}",
                                                args.timeout, server_env))
                t = least(runs["t"])
                row.update(tileiras_rc=t["rc"], tileiras_cpu=t["cpu"], tileiras_rss=t["rss"])
                if runs["n"]:
                    n = least(runs["n"])
                    row.update(cli_rc=n["rc"], cli_cpu=n["cpu"], cli_rss=n["rss"])
                if runs["s"]:
                    n = least(runs["s"])
                    row.update(server_rc=n["rc"], server_client_cpu=n["client"],
                               server_rss=n["rss"], server_cpu=n["cpu"])
                return row

            rows = []
            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                for n, row in enumerate(pool.map(one, paths), 1):
                    rows.append(row)
                    progress(f"tileiras and CLI {target}", n, len(paths))
            if "inprocess" not in skip:
                results = in_process(paths, target)
                for row in rows:
                    r = results[row["kernel"]]
                    row["inprocess_rc"] = r["rc"]
                    if r["rc"] == 0:
                        row.update(inprocess_cpu=r["cpu"], inprocess_ptxas=r["ptxas"],
                                   inprocess_total=r["cpu"] + r["ptxas"],
                                   stages=r["stages"])
            batch = None
            if "batch" not in skip:
                ok = [p for p, r in zip(paths, rows) if r["tileiras_rc"] == 0]
                b = measured([str(nanotile), *map(str, ok), f"--gpu-name={target}",
                              "--emit=cubin", "-j", "1", "-o", str(Path(tmp) / "batch")],
                             args.timeout * max(1, len(ok)), env)
                batch = {"n": len(ok), "cpu": b["cpu"], "rc": b["rc"]}
            if server is not None:
                server = stop_server(nanotile, server_env, server)
            summary(rows, target, batch, server)
            all_rows += rows
    print(f"\ngoals: {GOALS}")
    if args.csv:
        fields = ["kernel", "target", "tileiras_rc", "tileiras_cpu", "tileiras_rss",
                  "cli_rc", "cli_cpu", "cli_rss", "inprocess_rc", "inprocess_cpu",
                  "inprocess_ptxas", "inprocess_total", "stages", "server_rc",
                  "server_client_cpu", "server_cpu", "server_rss"]
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            for row in all_rows:
                writer.writerow({k: (json.dumps(v) if isinstance(v, dict) else v)
                                 for k, v in row.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
