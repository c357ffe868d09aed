"""Start-up of the ``nanotile`` command beside NVIDIA's tools: CPU seconds (user + system,
children included) of each command, the median of several runs, after one warm-up run
(Python bytecode caches written, as in a user's install: PYTHONDONTWRITEBYTECODE is
dropped). Goals (issue 17): ``nanotile --version`` <= 0.1 s, printing a bytecode file
<= 0.15 s.

    .venv/bin/python bench/startup_bench.py [--runs 9] [KERNEL.tileirbc]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("kernel", nargs="?", default=str(KERNEL))
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    nanotile = str(BIN / "nanotile")
    tileiras, disasm = tool("tileiras"), tool("tileirdisasm")
    commands = {
        "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"],
        "nanotile --version": [nanotile, "--version"],
        "nanotile K.tileirbc": [nanotile, args.kernel],
        "nanotile --help": [nanotile, "--help"],
    }
    if tileiras:
        commands["tileiras --version"] = [str(tileiras), "--version"]
    if disasm:
        commands["tileirdisasm K.tileirbc"] = [str(disasm), args.kernel]
    print(f"CPU seconds, median of {args.runs} runs (K = {Path(args.kernel).name})\n")
    print("| command | CPU s | min | max | goal |")
    print("|---|---:|---:|---:|---|")
    for label, cmd in commands.items():
        _, status = cpu_seconds(cmd, env)  # warm-up: writes the bytecode caches
        if status != 0:
            print(f"| {label} | exit status {status} | | | {GOALS.get(label, '')} |")
            continue
        times = [cpu_seconds(cmd, env)[0] for _ in range(args.runs)]
        goal = f"<= {GOALS[label]} s" if label in GOALS else ""
        print(f"| {label} | {statistics.median(times):.3f} | {min(times):.3f} | "
              f"{max(times):.3f} | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
