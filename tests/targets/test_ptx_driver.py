"""The `nanotile` driver's PTX outputs: `-o K.ptx` / `--emit=ptx|cubin` with
`--gpu-name`, a clean error (no traceback, no output file) for a kernel the back end
cannot lower, and the sm_100 PTX running in the emulator like the sm_90 PTX."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from nanotile.passes.base import Pass
from nanotile.targets.compile import ptxas_path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared" / "corpus"
EXAMPLES = ROOT / "examples"


def nanotile(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanotile.cli", *args], cwd=ROOT,
                          check=False, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("gpu,target", [("sm_90", "sm_90a"), ("sm_100", "sm_100a")])
def test_driver_writes_ptx(tmp_path, gpu, target):
    out = tmp_path / "k.ptx"
    result = nanotile(str(EXAMPLES / "softmax_rows.mlir"), f"--gpu-name={gpu}", "-o",
                      str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert f".target {target}" in text and ".visible .entry softmax_rows(" in text
    assert text.count(".param .u64") == 2 and text.count(".param .u32") == 8


def test_driver_emits_cubin(tmp_path):
    if ptxas_path() is None:
        pytest.skip("ptxas not installed (nvidia-cuda-nvcc wheel)")
    out = tmp_path / "k.cubin"
    result = nanotile(str(EXAMPLES / "axpy.tileirbc"), "--gpu-name=sm_100",
                      "--emit=cubin", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_unsupported_kernel_is_a_clean_error(tmp_path):
    # sm_90 has no f8E8M0FNU (block scales) nor block-scaled MMA: refused like tileiras
    path = SHARED / "cutile-tests" / (
        "kernels_scaled_matmul__block_scaled_matmul_kernel@ctas2__f8_e4m3fnx2_f8_e8m0fnux4_"
        "f8_e4m3fnx2_f8_e8m0fnux4_f32x2_256_256_128_32.mlir")
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    out = tmp_path / "k.ptx"
    result = nanotile(str(path), "--gpu-name=sm_90", "-o", str(out))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "error: 'assume': element type 'f8E8M0FNU' is not supported on sm_90" in result.stderr
    assert ":" in result.stderr.split("error:")[0]  # file:line:col of the op
    assert not out.exists()


def test_unknown_gpu_name_is_a_usage_error():
    result = nanotile(str(EXAMPLES / "axpy.mlir"), "--gpu-name=sm_80",
                      "--emit=ptx")
    assert result.returncode != 0 and "sm_80" in result.stderr
    assert "Traceback" not in result.stderr


def test_sm100_ptx_runs_like_the_interpreter():
    from nanotile.interp import cutile_args, run
    from nanotile.loader import load_file
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    path = str(EXAMPLES / "softmax_rows.tileirbc")
    x = np.random.default_rng(5).standard_normal((3, 100), dtype=np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    run(path, "softmax_rows", (3,), *cutile_args(x.copy(), want))
    run_ptx(compile_to_ptx(load_file(path), "sm_100"), "softmax_rows", grid=(3,),
            args=cutile_args(x.copy(), got))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


# -- the lower stages are passes of the pipeline: one run, every stage printable ----------

AXPY = str(EXAMPLES / "axpy.mlir")
HEADER = re.compile(r"^// -----// IR Dump After (\S+?(?:{[^}]*})?) //----- //$", re.MULTILINE)


def to_ptx(gpu: str) -> str:
    """The default pipeline of ``gpu`` up to and including select-instructions."""
    from nanotile.passes.pipelines import default_pipeline

    steps = default_pipeline(gpu).split(",")
    return ",".join(steps[:steps.index(f"select-instructions{{gpu={gpu}}}") + 1])


def dumps_of(err: str) -> list[tuple[str, str]]:
    """(pass spelling, text) of each ``IR Dump After`` in ``err``."""
    marks = list(HEADER.finditer(err))
    return [(m.group(1), err[m.end():marks[i + 1].start() if i + 1 < len(marks) else None])
            for i, m in enumerate(marks)]


def nanotile_main(capsys, *argv: str) -> tuple[int, str, str]:
    from nanotile.driver import main

    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_emit_ptx_dump_after_all_shows_every_stage_in_order(capsys, gpu):
    from nanotile.loader import load_file
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets.compile import compile_to_ptx

    status, out, err = nanotile_main(capsys, AXPY, f"--gpu-name={gpu}", "--emit=ptx",
                                     "--dump-after=all")
    assert status == 0, err
    dumps = dumps_of(err)
    steps = parse_pipeline(default_pipeline(gpu))
    names = [name for name, _ in dumps]
    assert names == [s.spelling() for s in steps]  # every stage once, in order
    assert f"select-instructions{{gpu={gpu}}}" in names
    text = {name.split("{")[0]: dump for name, dump in dumps}  # by pass name
    # tile-ptr: views are gone, pointer tiles instead; still Tile IR
    assert "make_tensor_view" in text["eqsat"]
    assert "make_tensor_view" not in text["lower-views"] and "offset " in text["lower-views"]
    # tile-layout (once assign-layouts is in the pipeline): Tile IR with layouts in the types
    if "assign-layouts" in text:
        assert "#blocked<" in text["assign-layouts"] and "#replicated" in text["assign-layouts"]
        assert "entry @axpy" in text["assign-layouts"]
    # ptx: the dump after select-instructions is PTX text for the target, and the last dump is
    # what --emit=ptx writes, which is what compile_to_ptx returns
    lowered = text["select-instructions"]
    assert f".target {gpu}a" in lowered and ".visible .entry axpy(" in lowered
    assert "cuda_tile" not in lowered and "entry @" not in lowered
    assert dumps[-1][1].strip() == out.strip()
    assert out == compile_to_ptx(load_file(AXPY), gpu)


def test_emit_ptx_runs_the_pipeline_once(capsys, monkeypatch):
    """Each step of the pipeline runs once for --emit=ptx with pass flags (the driver
    used to run the pipeline for the flags, then again to compile)."""
    from nanotile.passes import registry
    from nanotile.passes.pipelines import default_pipeline

    runs: list[str] = []
    for name, cls in list(registry.PASSES.items()):
        counted = type(cls.__name__, (cls,), {
            "apply": lambda self, module, ctx, _cls=cls: runs.append(self.name)
            or _cls.apply(self, module, ctx)})
        monkeypatch.setitem(registry.PASSES, name, dataclass(frozen=True)(counted))
    status, out, err = nanotile_main(capsys, AXPY, "--gpu-name=sm_90", "--emit=ptx",
                                     "--time-passes")
    assert status == 0, err
    assert ".target sm_90a" in out
    assert "lower-views" in runs and "select-instructions" in runs
    steps = [s.name for s in registry.parse_pipeline(default_pipeline("sm_90"))]
    assert runs == steps  # each step once (a pass the pipeline names twice runs twice)
    table = err[err.index("Execution time report"):]
    for name in set(runs):
        assert len(re.findall(rf"\)\s+{name}$", table, re.MULTILINE)) == 1, name


def test_dump_dir_writes_ptx_files_for_ptx_stages(capsys, tmp_path):
    status, out, err = nanotile_main(capsys, AXPY, "--gpu-name=sm_100", "--emit=ptx",
                                     f"--dump-dir={tmp_path}")
    assert status == 0, err
    files = sorted(p.name for p in tmp_path.iterdir())
    number = len(to_ptx("sm_100").split(","))  # select-instructions's place in the pipeline
    assert files[0] == "00-input.mlir"
    assert all(f.endswith(".mlir") for f in files[:number])  # the tile stages
    assert files[number - 1] == f"{number - 1:02d}-{files[number - 1][3:-5]}.mlir"
    ptx_files = [f for f in files if f.endswith(".ptx")]
    assert ptx_files and ptx_files[0] == f"{number:02d}-select-instructions.ptx"
    assert len(files) == number + len(ptx_files)
    last = (tmp_path / files[-1]).read_text().split("\n", 1)[1]
    assert files[-1].endswith(".ptx") and last.strip() == out.strip()


def test_emit_text_of_a_pipeline_ending_in_ptx_prints_ptx(capsys):
    status, out, err = nanotile_main(capsys, AXPY, "-p", to_ptx("sm_90"))
    assert status == 0, err
    assert out.startswith("//\n// Generated by nanotile for sm_90")
    assert ".visible .entry axpy(" in out


def test_pipeline_ending_in_ptx_with_emit_bytecode_is_an_error(capsys, tmp_path):
    out = tmp_path / "k.tileirbc"
    status, _, err = nanotile_main(capsys, AXPY, "--emit=bytecode", "--time-passes",
                                   "-o", str(out))
    assert status == 1 and "Traceback" not in err
    assert "--emit=bytecode writes Tile IR, but the pipeline ends in PTX" in err
    assert "Execution time report" not in err and not out.exists()  # refused before running
    status, _, err = nanotile_main(capsys, AXPY, "--emit=bytecode",
                                   "--stop-after=resolve-tokens", "-o", str(out))
    assert status == 0, err
    assert out.read_bytes().startswith(b"\x7fTileIR")


def test_emit_ptx_of_a_pipeline_stopping_before_ptx_is_an_error(capsys):
    status, _, err = nanotile_main(capsys, AXPY, "--emit=ptx", "--stop-after=cse")
    assert status == 1
    assert "--emit=ptx needs a pipeline that ends in PTX, but this one ends in language " \
           "'tile-canon'" in err


@dataclass(frozen=True)
class BranchToNowhere(Pass):
    """Test pass: a PTX pass that branches to a label its kernel lacks."""

    name: ClassVar[str] = "branch-to-nowhere"
    input: ClassVar[str] = "ptx-sm90"
    output: ClassVar[str | None] = "ptx-sm90"

    def apply(self, module, ctx) -> bool:
        from nanotile.targets.ptx.ir import Instr

        kernel = module.ptx.kernels[0]
        kernel.body.insert(len(kernel.body) - 1, Instr("bra.uni", ["$L_nowhere"]))
        return True


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_ptx_language_check_names_the_pass_that_broke_the_program(capsys, monkeypatch, gpu):
    from nanotile.passes import registry

    monkeypatch.setitem(registry.PASSES, "branch-to-nowhere", BranchToNowhere)
    pipeline = f"{to_ptx(gpu)},branch-to-nowhere"
    status, _, err = nanotile_main(capsys, AXPY, "-p", pipeline)
    assert status == 1 and "Traceback" not in err
    # a ptx-sm90 pass runs on ptx-sm100 too, and the module stays in the target's language
    language = "ptx-sm90" if gpu == "sm_90" else "ptx-sm100"
    assert f"error: after pass 'branch-to-nowhere' (output language {language}): kernel " \
           "'axpy': 'bra.uni $L_nowhere;' branches to label '$L_nowhere', which the " \
           "kernel does not define" in err
    status, _, err = nanotile_main(capsys, AXPY, "-p", pipeline, "--no-verify")
    assert status == 0, err


def test_tile_pass_after_select_instructions_is_refused(capsys):
    status, _, err = nanotile_main(capsys, AXPY, "-p", f"{to_ptx('sm_100')},cse")
    assert status == 1
    assert "pass 'cse' reads language 'tile', but the module is in 'ptx-sm100'" in err


def test_start_after_select_instructions_resumes_from_a_ptx_dump(capsys, tmp_path):
    status, ptx, err = nanotile_main(capsys, AXPY, "--gpu-name=sm_90", "--emit=ptx")
    assert status == 0, err
    dump = tmp_path / "k.ptx"
    dump.write_text(ptx)
    status, out, err = nanotile_main(capsys, str(dump), "--gpu-name=sm_90", "--emit=ptx",
                                     "--start-after=select-instructions", "--dump-after=all")
    assert status == 0, err
    assert out == ptx


def test_gpu_name_and_the_pipelines_target_agree(capsys):
    # -p chooses the target when --gpu-name is not given ...
    status, out, err = nanotile_main(capsys, AXPY, "-p", to_ptx("sm_90"), "--emit=ptx")
    assert status == 0, err
    assert ".target sm_90a" in out
    # ... and a pipeline lowering for another target than --gpu-name is an error
    status, _, err = nanotile_main(capsys, AXPY, "-p", to_ptx("sm_90"), "--emit=ptx",
                                   "--gpu-name=sm_100")
    assert status == 1
    assert "--gpu-name=sm_100, but the pipeline lowers to PTX for sm_90" in err


def test_compile_to_ptx_without_the_tile_pipeline_runs_only_the_backend_steps():
    """run_pipeline=False: for a module that went through the tile passes already."""
    from nanotile.loader import load_file
    from nanotile.passes.manager import run_pipeline
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline
    from nanotile.targets.compile import backend_steps, compile_to_ptx

    steps = parse_pipeline(default_pipeline("sm_90"))
    backend = backend_steps("sm_90")
    assert backend[0].spelling() == "lower-constants"
    assert [s.spelling() for s in steps[-len(backend):]] == [s.spelling() for s in backend]
    module = load_file(AXPY)
    run_pipeline(module, steps[:-len(backend)])
    assert module.ptx is None
    assert compile_to_ptx(module, "sm_90", run_pipeline=False) == \
        compile_to_ptx(load_file(AXPY), "sm_90")
