"""Start-up of the ``nanotile`` command beside NVIDIA's tools: CPU seconds (user + system,
children included) of each command, the median of several runs, after one warm-up run
(Python bytecode caches written, as in a user's install: PYTHONDONTWRITEBYTECODE is
dropped). Goals (issue 17): ``nanotile --version`` <= 0.1 s, printing a bytecode file
<= 0.15 s.

The same commands then run again while a compile server runs (``nanotile server``, on a
socket of this run's own): their CPU is the command's process plus what the server
reports it spent on the request (NANOTILE_SERVER_STATS); beside them, a compile to a
cubin by nanotile (with and without the server) and by tileiras.

    .venv/bin/python bench/startup_bench.py [--runs 9] [KERNEL.tileirbc]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = (ROOT / ".." / "shared" / "corpus" / "cutile" / "vector_add.tileirbc").resolve()
BIN = Path(sys.executable).parent
GOALS = {"nanotile --version": 0.1, "nanotile K.tileirbc": 0.15}


def tool(name: str) -> Path | None:
    try:
        import nvidia
    except ImportError:
        return None
    for root in nvidia.__path__:
        path = Path(root) / "cu13" / "bin" / name
        if path.exists():
            return path
    return None


def cpu_seconds(cmd: list[str], env: dict) -> tuple[float, int]:
    """(CPU seconds of one run, its exit status)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def served_seconds(cmd: list[str], env: dict, stats: Path) -> tuple[float, int]:
    """(CPU seconds of one run through the compile server, its exit status)."""
    stats.unlink(missing_ok=True)
    seconds, status = cpu_seconds(cmd, {**env, "NANOTILE_SERVER_STATS": str(stats)})
    served = stats.read_text().split() if stats.exists() else []
    return (seconds + float(served[0]) if served else float("nan")), status


def table(commands: dict[str, list[str]], runs: int, measure) -> None:
    print("| command | CPU s | min | max | goal |")
    print("|---|---:|---:|---:|---|")
    for label, cmd in commands.items():
        _, status = measure(cmd)  # warm-up: writes the bytecode caches
        if status != 0:
            print(f"| {label} | exit status {status} | | | {GOALS.get(label, '')} |")
            continue
        times = [measure(cmd)[0] for _ in range(runs)]
        goal = f"<= {GOALS[label]} s" if label in GOALS else ""
        print(f"| {label} | {statistics.median(times):.3f} | {min(times):.3f} | "
              f"{max(times):.3f} | {goal} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("kernel", nargs="?", default=str(KERNEL))
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["NANOTILE_NO_SERVER"] = "1"
    nanotile = str(BIN / "nanotile")
    tileiras, disasm = tool("tileiras"), tool("tileirdisasm")
    commands = {
        "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"],
        "nanotile --version": [nanotile, "--version"],
        "nanotile K.tileirbc": [nanotile, args.kernel],
        "nanotile --help": [nanotile, "--help"],
    }
    with tempfile.TemporaryDirectory() as folder:
        cubin = str(Path(folder) / "k.cubin")
        compile_command = [nanotile, args.kernel, "--gpu-name", "sm_90", "-o", cubin]
        commands["nanotile K.tileirbc --gpu-name sm_90 -o K.cubin"] = compile_command
        if tileiras:
            commands["tileiras --version"] = [str(tileiras), "--version"]
            commands["tileiras --gpu-name sm_90 K.tileirbc -o K.cubin"] = [
                str(tileiras), "--gpu-name=sm_90", args.kernel, "-o", cubin]
        if disasm:
            commands["tileirdisasm K.tileirbc"] = [str(disasm), args.kernel]
        print(f"CPU seconds, median of {args.runs} runs (K = {Path(args.kernel).name})\n")
        table(commands, args.runs, lambda cmd: cpu_seconds(cmd, env))
        served_env = {**env, "NANOTILE_SERVER_SOCKET": str(Path(folder) / "server.sock")}
        served_env.pop("NANOTILE_NO_SERVER")
        subprocess.run([nanotile, "server", "start"], env=served_env, check=True,
                       capture_output=True)
        try:
            print("\nwhile a compile server runs (the command's CPU and the server's for "
                  "its request):\n")
            stats = Path(folder) / "stats"
            table({label: cmd for label, cmd in commands.items()
                   if label.startswith("nanotile")}, args.runs,
                  lambda cmd: served_seconds(cmd, served_env, stats))
        finally:
            subprocess.run([nanotile, "server", "stop"], env=served_env,
                           capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
