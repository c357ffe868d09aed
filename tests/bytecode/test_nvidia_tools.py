"""NVIDIA's own tools accept nanotile's bytecode (they run without a GPU).

- tileirdisasm: every corpus kernel, re-encoded at ANOTHER version (13.4 files at 13.3,
  older ones at 13.4; a file using 13.4-only features stays at 13.4), disassembles to
  exactly the text tileirdisasm printed for the original (the .mlir beside it).
- tileiras: every kernel of corpus/cutile and a fixed sample of cutile-tests, written at
  13.4 and at 13.3, compiles for sm_100 and sm_90.
"""

from __future__ import annotations

import csv
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from nanotile.bytecode.reader import read_bytecode
from nanotile.bytecode.writer import write_bytecode
from nanotile.diagnostics import CompileError

from .corpus import CUTILE, CUTILE_TESTS, corpus_files, nvidia_tool

TILEIRDISASM = nvidia_tool("tileirdisasm")
TILEIRAS = nvidia_tool("tileiras")
FILES = corpus_files()
WORKERS = 4  # the tools are single-threaded processes; a few at a time keeps 2 cores busy


def _other_version(data: bytes, module) -> tuple[tuple[int, int], bytes]:
    """The module written at a version other than the file's, where it can be."""
    version = (data[8], data[9])
    target = (13, 3) if version == (13, 4) else (13, 4)
    try:
        return target, write_bytecode(module, target)
    except CompileError:  # uses something 13.4 added
        return version, write_bytecode(module, version)


@pytest.mark.skipif(TILEIRDISASM is None, reason="NVIDIA tileirdisasm (nvidia-cuda-tileiras "
                    "wheel) is not installed")
@pytest.mark.skipif(not FILES, reason="corpus not found under ../shared/corpus")
def test_tileirdisasm_reads_every_reencoded_kernel(tmp_path):
    def check(job: tuple[int, Path]) -> str | None:
        k, path = job
        data = path.read_bytes()
        version, blob = _other_version(data, read_bytecode(data, str(path)))
        out = tmp_path / f"{k}.tileirbc"
        out.write_bytes(blob)
        proc = subprocess.run([str(TILEIRDISASM), str(out)], check=False, capture_output=True, text=True,
                              timeout=60)
        if proc.returncode != 0:
            return f"{path.name} at {version}: tileirdisasm failed: {proc.stderr.strip()}"
        if proc.stdout != path.with_suffix(".mlir").read_text():
            return f"{path.name} at {version}: text differs from the original's"
        return None

    with ThreadPoolExecutor(WORKERS) as pool:
        problems = [p for p in pool.map(check, enumerate(FILES)) if p]
    assert not problems, f"{len(problems)} of {len(FILES)} failed:\n" + "\n".join(problems[:20])


def _tileiras_sample() -> list[Path]:
    """corpus/cutile, plus 20 cutile-tests kernels tileiras compiled quickly for both
    targets (tileiras_times.csv), spread evenly over the sorted names."""
    files = sorted(CUTILE.glob("*.tileirbc"))
    times = CUTILE_TESTS / "tileiras_times.csv"
    if not times.is_file():
        return files
    ok: dict[str, list[float]] = {}
    with times.open() as f:
        for row in csv.DictReader(f):
            if row["rc"] == "0":
                ok.setdefault(row["name"], []).append(float(row["seconds"]))
    quick = sorted(name for name, secs in ok.items() if len(secs) == 2 and max(secs) < 0.5)
    step = max(1, len(quick) // 20)
    return files + [CUTILE_TESTS / f"{name}.tileirbc" for name in quick[::step][:20]]


@pytest.mark.skipif(TILEIRAS is None, reason="NVIDIA tileiras (nvidia-cuda-tileiras wheel) "
                    "is not installed")
@pytest.mark.skipif(not FILES, reason="corpus not found under ../shared/corpus")
def test_tileiras_compiles_written_kernels():
    jobs = []
    workdir = Path(tempfile.mkdtemp(prefix="nanotile-tileiras-"))
    written_13_3 = 0
    for k, path in enumerate(_tileiras_sample()):
        module = read_bytecode(path.read_bytes(), str(path))
        for version, archs in (((13, 4), ("sm_100",)), ((13, 3), ("sm_90", "sm_100"))):
            try:
                blob = write_bytecode(module, version)
            except CompileError:
                continue  # a 13.4-only kernel
            written_13_3 += version == (13, 3)
            out = workdir / f"{k}.{version[1]}.tileirbc"
            out.write_bytes(blob)
            jobs += [(path.name, version, arch, out) for arch in archs]
    assert written_13_3 >= 30

    def compile_one(job) -> str | None:
        name, version, arch, src = job
        cubin = src.with_suffix(f".{arch}.cubin")
        proc = subprocess.run([str(TILEIRAS), f"--gpu-name={arch}", str(src), "-o",
                               str(cubin)], check=False, capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0 or not cubin.is_file() or cubin.stat().st_size == 0:
            return f"{name} at {version} for {arch}: rc={proc.returncode} {proc.stderr[:300]}"
        return None

    with ThreadPoolExecutor(2) as pool:
        problems = [p for p in pool.map(compile_one, jobs) if p]
    assert not problems, "\n".join(problems)
