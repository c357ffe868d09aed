"""A pipeline resumed from any stage's dump writes the PTX the whole run wrote: every file
of ``--dump-dir`` (Tile IR, tile-layout, simt and PTX stages) given back to ``nanotile``
with ``--start-after=N`` (its number) compiles to identical PTX. The facts assume-to-facts
learned travel in the dumps as attributes (nanotile.passes.facts), layouts in the types,
shared offsets and the CTA's warps as entry attributes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nanotile.driver import main

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile"


def compile_file(tmp_path: Path, *argv: str) -> tuple[int, str]:
    out = tmp_path / "out.ptx"
    if out.exists():
        out.unlink()
    status = main([*argv, "-o", str(out)])
    return status, out.read_text() if out.exists() else ""


@pytest.mark.parametrize("name, gpu", [("vector_add", "sm_90"), ("layernorm", "sm_100"),
                                       ("matmul_f16", "sm_90")])
def test_resuming_from_every_dump_gives_the_same_ptx(tmp_path, capsys, name, gpu):
    path = CORPUS / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    dumps = tmp_path / "dumps"
    # --no-ptx-loc: Tile IR dumps do not print loc(...), so a resumed run cannot know the
    # original source lines (the .loc lines); everything else must be identical
    status, ptx = compile_file(tmp_path, str(path), f"--gpu-name={gpu}", "--emit=ptx",
                               f"--dump-dir={dumps}", "--no-ptx-loc")
    assert status == 0, capsys.readouterr().err
    files = sorted(os.listdir(dumps))
    kinds = {f.rsplit(".", 1)[1] for f in files}
    assert kinds == {"mlir", "ptx"} and len(files) > 40
    text = {f: (dumps / f).read_text() for f in files}
    assert any("#blocked<" in t or "#linear<" in t for t in text.values())  # tile-layout
    assert any("#regs>" in t for t in text.values())  # simt
    assert any("nanotile.args = [[#cuda_tile.div_by<16>]" in t for t in text.values())
    for file in files[1:]:  # 00-input is the input itself
        number = file.split("-", 1)[0]
        status, resumed = compile_file(tmp_path, str(dumps / file), f"--gpu-name={gpu}",
                                       "--emit=ptx", f"--start-after={int(number)}",
                                       "--no-ptx-loc")
        assert status == 0, f"{file}: {capsys.readouterr().err}"
        assert resumed == ptx, f"resuming from {file} changed the PTX"


def test_start_after_a_pass_the_pipeline_runs_twice_needs_its_number(tmp_path, capsys):
    path = CORPUS / "vector_add.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    status, _ = compile_file(tmp_path, str(path), "--emit=ptx", "--start-after=ptx-cse")
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err
    assert "--start-after=ptx-cse: the pipeline runs ptx-cse 2 times" in err
    assert "--start-after=ptx-cse,2 or --start-after=" in err
    assert not (tmp_path / "out.ptx").exists()


def test_start_after_names_the_occurrence_of_a_repeated_pass(tmp_path, capsys):
    """``--start-after=ptx-cse,N`` resumes after the N-th ptx-cse (llc's spelling): each
    run's dump resumed after its own occurrence gives the whole run's PTX; a third run
    does not exist."""
    path = CORPUS / "layernorm.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    dumps = tmp_path / "dumps"
    status, ptx = compile_file(tmp_path, str(path), "--emit=ptx", f"--dump-dir={dumps}")
    assert status == 0, capsys.readouterr().err
    runs = sorted(f for f in os.listdir(dumps) if f.endswith("-ptx-cse.ptx"))
    assert len(runs) == 2
    for occurrence, dump in enumerate(runs, 1):
        status, resumed = compile_file(tmp_path, str(dumps / dump), "--emit=ptx",
                                       f"--start-after=ptx-cse,{occurrence}")
        assert status == 0, capsys.readouterr().err
        assert resumed == ptx
    status, _ = compile_file(tmp_path, str(dumps / runs[0]), "--emit=ptx",
                             "--start-after=ptx-cse,3")
    err = capsys.readouterr().err
    assert status == 1 and "the pipeline runs ptx-cse 2 times (occurrences 1 to 2)" in err
