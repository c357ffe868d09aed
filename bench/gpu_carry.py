"""Pack what a bare GPU machine needs to run nanotile's GPU checks: one folder to carry.

    .venv/bin/python bench/gpu_carry.py DIR            # here (the CPU machine)
    bash DIR/run.sh                                    # there, from the repository root

A GPU machine lent for a session has CUDA, PyTorch, cuda-python and NumPy but not
nanotile's own dependencies nor ../shared. DIR gets (about 4 MB):

- ``whl/``: lark's wheel (pure Python, from this environment's pip cache or the index);
- ``site.tar.xz``: egglog and the modules ``import egglog`` pulls in (graphviz,
  opentelemetry, black, pytokens, platformdirs), copied from this environment with the
  debug information stripped from egglog's extension (236 MB -> 15 MB; x86-64, CPython
  3.12: the machine's python3 must match);
- ``shared/corpus/``: the ../shared files tests/targets/test_gpu.py and bench/gpu_time.py
  read (run.sh links ../shared to it when there is none);
- ``tileiras/``: tileiras' cubins of the corpus kernels bench/gpu_time.py times, for sm_90;
- ``run.sh``: installs the above under /tmp, then runs test_gpu.py (unless NO_TESTS),
  ``bench/gpu_check.py run`` (through bench/gpu_isolate.py: a chunk of cases a process)
  on each folder of CHECK_FOLDERS (prepared here with
  ``gpu_check.py prepare``), and bench/gpu_time.py when TIME is set (TIME_ARGS passed on),
  writing their output under $OUT.

DIR lies inside the repository, which carries it to the machine (keep it out of git:
name it in .git/info/exclude), with the prepared gpu_check folders.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus"
# what `import egglog` imports that the GPU machine's image lacks, besides egglog itself
EGGLOG_IMPORTS = ["egglog", "graphviz", "opentelemetry", "black", "blackd", "blib2to3",
                  "_black_version.py", "pytokens", "platformdirs"]
TIMED = ["vector_add", "scaled_add", "gelu_cast", "transpose", "row_softmax", "layernorm",
         "matmul_f16", "matmul_f16_tma"]

RUN_SH = r'''#!/bin/bash
# bench/gpu_carry.py's folder, run on the GPU machine from the repository root.
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/$ROOT_FROM_HERE" || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$here"/whl/*.whl || exit 1
tar -xJf "$here/site.tar.xz" -C /tmp || exit 1
export PYTHONPATH=$PWD:/tmp/site:/tmp/site_carry PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
[ -e ../shared ] || ln -s "$here/shared" ../shared
echo "ptxas: $(command -v ptxas) $(ptxas --version | tail -1)"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -z "$NO_TESTS" ] && timeout ${TEST_LIMIT:-240} python3 -m pytest -p no:cacheprovider \
  tests/targets/test_gpu.py -v -rs -n 8 ${TEST_ARGS} 2>&1 | tee "$OUT/test_gpu.txt"
for folder in $CHECK_FOLDERS; do
  [ -d "$folder" ] && timeout ${CHECK_LIMIT:-200} python3 bench/gpu_isolate.py "$folder" \
    --save "$OUT/saved" 2>&1 | tee "$OUT/gpu_check_$(basename "$folder").txt"
done
[ -d "$OUT/saved" ] && tar -czf "$OUT/saved.tgz" -C "$OUT" saved && rm -rf "$OUT/saved"
[ -n "$TIME" ] && timeout ${TIME_LIMIT:-120} python3 bench/gpu_time.py \
  --tileiras-cubins "$here/tileiras" ${TIME_ARGS} 2>&1 | tee "$OUT/gpu_time.txt"
true
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    folder = args.folder.resolve()
    if not folder.is_relative_to(ROOT) or folder == ROOT:
        parser.error("the folder must lie inside the repository (it travels with it)")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    _lark_wheel(folder / "whl")
    _egglog_site(folder / "site.tar.xz")
    _corpus(folder / "shared" / "corpus")
    _tileiras_cubins(folder / "tileiras")
    root = "/".join([".."] * len(folder.relative_to(ROOT).parts))
    (folder / "run.sh").write_text(RUN_SH.replace("$ROOT_FROM_HERE", root))
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    print(f"{folder}: {size / 2 ** 20:.1f} MB")
    return 0


def _lark_wheel(target: Path) -> None:
    import lark

    target.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "-d", str(target), f"lark=={lark.__version__}"],
                   check=True)


def _egglog_site(archive: Path) -> None:
    import egglog

    site = Path(egglog.__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "site_carry"
        copy.mkdir()
        names = EGGLOG_IMPORTS + [p.name for p in site.glob("*__mypyc*.so")] + \
            [p.name for p in site.glob("opentelemetry_api-*.dist-info")]
        for name in names:
            source = site / name
            if source.is_dir():
                shutil.copytree(source, copy / name,
                                ignore=shutil.ignore_patterns("__pycache__", "exp",
                                                              "visualizer.js"))
            elif source.exists():
                shutil.copy2(source, copy / name)
        for extension in (copy / "egglog").glob("bindings*.so"):
            subprocess.run(["strip", "--strip-debug", str(extension)], check=True)
        with tarfile.open(archive, "w:xz") as tar:
            tar.add(copy, arcname="site_carry")


def _corpus(target: Path) -> None:
    """The corpus files test_gpu.py names (its cutile-tests kernels, found by their
    quoted names) and the cuTile kernels with tileiras' sm_90 PTX."""
    (target / "cutile" / "ptx").mkdir(parents=True)
    (target / "cutile-tests").mkdir()
    test_text = (ROOT / "tests" / "targets" / "test_gpu.py").read_text()
    test_text = re.sub(r'"\s*\n\s*"', "", test_text)      # names split over two lines
    for name in set(re.findall(r'"((?:kernels_|test_)[\w@.]+)"', test_text)):
        source = SHARED / "cutile-tests" / f"{name}.tileirbc"
        if source.exists():
            shutil.copy2(source, target / "cutile-tests")
    for name in sorted(set(TIMED) | {"vector_add", "scaled_add", "matmul_f16", "transpose",
                                     "matmul_f16_tma"}):
        shutil.copy2(SHARED / "cutile" / f"{name}.tileirbc", target / "cutile")
        shutil.copy2(SHARED / "cutile" / "ptx" / f"{name}.sm_90.ptx", target / "cutile" / "ptx")


def _tileiras_cubins(target: Path) -> None:
    import nvidia

    target.mkdir()
    tileiras = next(Path(p) / "cu13" / "bin" / "tileiras" for p in nvidia.__path__)
    for name in TIMED:
        subprocess.run([str(tileiras), "--gpu-name=sm_90", str(SHARED / "cutile" /
                        f"{name}.tileirbc"), "-o", str(target / f"{name}.sm_90.cubin")],
                       check=True)


if __name__ == "__main__":
    sys.exit(main())
