"""NVIDIA's own tools accept nanotile's bytecode (they run without a GPU).

- tileirdisasm: every corpus kernel, re-encoded at ANOTHER version (13.4 files at 13.3,
  older ones at 13.4; a file using 13.4-only features stays at 13.4), disassembles to
  exactly the text tileirdisasm printed for the original (the .mlir beside it).
- tileiras: every kernel of corpus/cutile and a fixed sample of cutile-tests, written at
  13.4 and at 13.3, compiles for sm_90 and for sm_100.
"""

from __future__ import annotations

import csv
import subprocess
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
def test_tileiras_compiles_written_kernels(tmp_path):
    jobs = []
    workdir = tmp_path
    written_13_3 = 0
    for k, path in enumerate(_tileiras_sample()):
        module = read_bytecode(path.read_bytes(), str(path))
        for version, archs in (((13, 4), ("sm_90", "sm_100")), ((13, 3), ("sm_90", "sm_100"))):
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


def _module_beyond_the_corpus():
    """Ops and fields no corpus file has: six ops, a private constant global, a producer."""
    from nanotile.ir import attrs as A
    from nanotile.ir import types as T
    from nanotile.ir.core import Block, Module, Operation, Region, make_op
    from nanotile.ir.enums import SymbolVisibility

    pf, i32 = T.TileType((), T.PointerType(T.F32)), T.TileType((), T.I32)
    block = Block()
    a0, a1 = block.add_argument(pf), block.add_argument(i32)

    def add(*args, **kw):
        return block.append(make_op(*args, **kw))

    add("ptr_to_int", [a0], [T.TileType((), T.I64)])
    add("ptr_to_ptr", [a0], [T.TileType((), T.PointerType(T.I32))])
    add("mulhii", [a1, a1], [i32])
    add("alloca", [], [pf], {"num_elem": 16, "alignment": 16, "global": True})
    view = add("make_tensor_view", [a0, a1], [T.TensorViewType(T.F32, (None,), (1,))],
               operand_segments=[1, 1, 0])
    add("get_tensor_shape", [view.results[0]], [i32])
    token = add("make_token", [], [T.TOKEN])
    add("memory_fence_alias_tko", [token.results[0]], [T.TOKEN])
    add("return", [], [], operand_segments=[0])
    entry = make_op("entry", [], [], {"sym_name": "k", "function_type": T.FunctionType(
        (pf, i32))}, [Region([block])])
    value = A.DenseElementsAttr(T.TileType((2,), T.F32), b"\0\0\x80\x3f\0\0\0\x40", False)
    g = Operation("global", attributes={"sym_name": "g", "value": value, "alignment": 16,
                                        "symbol_visibility": SymbolVisibility.private,
                                        "constant": True})
    return Module(items=[g, entry], producer="nanotile test")


@pytest.mark.skipif(TILEIRDISASM is None, reason="NVIDIA tileirdisasm (nvidia-cuda-tileiras "
                    "wheel) is not installed")
def test_tileirdisasm_reads_what_the_corpus_lacks(tmp_path):
    """Checks the op-table rows of ops absent from the corpus against NVIDIA's reader."""
    module = _module_beyond_the_corpus()
    path = tmp_path / "k.tileirbc"
    path.write_bytes(write_bytecode(module, (13, 4)))
    proc = subprocess.run([str(TILEIRDISASM), str(path)], check=False, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "// Producer: nanotile test",
        ("global private  constant @g alignment = 16 <f32: [1.000000e+00, 2.000000e+00]> : "
        "tile<2xf32>"),
        "entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>) {",
        "  %0 = ptr_to_int %arg0 : tile<ptr<f32>> -> tile<i64>",
        "  %1 = ptr_to_ptr %arg0 : tile<ptr<f32>> -> tile<ptr<i32>>",
        "  %2 = mulhii %arg1, %arg1 : tile<i32>",
        "  %3 = alloca num_elem = 16, alignment = 16 global : tile<ptr<f32>>",
        ("  %tview = make_tensor_view %arg0, shape = [%arg1], strides = [1] : tile<i32> -> "
        "tensor_view<?xf32, strides=[1]>"),
        "  %4 = get_tensor_shape %tview : tensor_view<?xf32, strides=[1]> -> tile<i32>",
        "  %5 = make_token : token",
        "  %6 = memory_fence_alias_tko %5",
        "  return",
        "}",
    ]
    back = read_bytecode(path.read_bytes(), str(path))
    assert back.producer == "nanotile test"
    assert write_bytecode(back, (13, 4)) == path.read_bytes()
    # 13.1 has no producer section and no global visibility: refused, not dropped silently.
    with pytest.raises(CompileError, match="operation 'cuda_tile.alloca' is not available"):
        write_bytecode(module, (13, 1))
    module.items = module.items[:1]  # the global alone
    with pytest.raises(CompileError, match="constant global `g` cannot be encoded"):
        write_bytecode(module, (13, 1))
