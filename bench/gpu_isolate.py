"""bench/gpu_check.py run, with the cases spread over processes: on the GPU machine.

    python3 bench/gpu_isolate.py DIR [--chunk 40]

An illegal instruction (or another sticky error) spoils the CUDA context of its process,
so every case ``gpu_check.py run`` launches after it fails too. This runs the prepared
folder DIR (``gpu_check.py prepare``) in chunks of cases, each chunk in a process of its
own (a folder of links to the chunk's files), and runs a chunk that had an ERROR again
one case a process, so that each case's line is its own verdict. Prints every case's
line in the manifest's order, then how many match the interpreter and how many differ
from the emulator.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_cases(folder: Path, cases: list[dict], scratch: Path, save: Path | None = None
              ) -> dict[str, str]:
    """gpu_check.py run over ``cases`` of ``folder`` in one process: case -> its line."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for case in cases:
        for suffix in (".cubin", ".npz"):
            source = folder / (case["name"] + suffix)
            if source.exists():
                (scratch / source.name).symlink_to(source.resolve())
    (scratch / "manifest.json").write_text(json.dumps(cases))
    command = [sys.executable, str(HERE / "gpu_check.py"), "run", str(scratch)]
    if save is not None:
        command += ["--save", str(save)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    names = {case["name"] for case in cases}
    lines = {line.split()[0]: line for line in done.stdout.splitlines()
             if line.split() and line.split()[0] in names}
    for name in names - lines.keys():
        lines[name] = f"{name} NO RESULT: {done.stderr.strip()[-200:]!r}"
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--chunk", type=int, default=40, help="cases a process")
    parser.add_argument("--save", type=Path, metavar="DIR",
                        help="passed to gpu_check.py run: the device's outputs of the cases "
                             "that do not match")
    args = parser.parse_args()
    cases = json.loads((args.folder / "manifest.json").read_text())
    lines: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for start in range(0, len(cases), args.chunk):
            chunk = cases[start:start + args.chunk]
            found = run_cases(args.folder, chunk, Path(tmp) / "chunk", args.save)
            if any(" ERROR " in line or " NO RESULT" in line for line in found.values()):
                for case in chunk:
                    found.update(run_cases(args.folder, [case], Path(tmp) / "one",
                                           args.save))
            lines.update(found)
    for case in cases:
        print(lines[case["name"]], flush=True)
    right = sum(" ok " in line for line in lines.values())
    same = sum(line.rstrip().endswith("emu ok") for line in lines.values())
    print(f"{right}/{len(cases)} cases match the interpreter; "
          f"{len(cases) - same} where the GPU and the emulator differ or were not compared")
    return 0 if right == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
