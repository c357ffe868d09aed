"""Golden tests of the ptx-* passes: each ``golden/<pass>.ptx`` is a small hand-written
kernel with the patterns the pass rewrites and the ones it must leave alone, a RUN line
naming the pipeline, and FileCheck lines (they check what goes AND what stays).

For each file: the pass's output (through the pass manager, with the ptx language checks
after each pass; and through the command line of the RUN line) passes ``filecheck``; the input run through no pass does NOT (so the
checks test the pass); ptxas accepts the output; and the output is a fixed point of the
pass for the passes that are idempotent. PTX keeps comments, so the lines carrying
FileCheck directives are dropped from the output before checking it.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nanotile.passes.base import PassContext
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.registry import parse_pipeline
from nanotile.targets.ptx.ir import language_of, load_ptx_module, parse_ptx_program

from ....passes.support import filecheck_path

ROOT = Path(__file__).resolve().parents[4]
GOLDEN = Path(__file__).parent / "golden"
# a target's own ptx passes have their golden files in its folder (tests mirror the source)
TARGET_GOLDEN = ROOT / "tests" / "targets" / "sm100" / "golden"
FILES = sorted(GOLDEN.glob("*.ptx")) + sorted(TARGET_GOLDEN.glob("*.ptx"))
RUN = re.compile(r"^// RUN: nanotile-passes %s -p (\S+) \| filecheck %s$", re.MULTILINE)
DIRECTIVE = re.compile(r"^\s*// (RUN|CHECK[-A-Z]*):")

needs_filecheck = pytest.mark.skipif(filecheck_path() is None,
                                     reason="filecheck (pip package 'filecheck') not found")


def pipeline_of(path: Path) -> str:
    match = RUN.search(path.read_text())
    assert match, f"{path.name}: no RUN line"
    return match.group(1)


def strip_directives(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not DIRECTIVE.match(line))


def run_passes(text: str, pipeline: str, filename: str = "<golden>") -> str:
    module = load_ptx_module(text, filename)
    options = RunOptions(verify=True, input_language=language_of(module.ptx))
    PipelineRun(options, io.StringIO()).run(module, parse_pipeline(pipeline))
    return module.ptx.render()


def filecheck(path: Path, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([filecheck_path(), str(path)], input=strip_directives(text),
                          check=False, capture_output=True, text=True, timeout=60)


def test_every_ptx_pass_has_a_golden_file():
    from nanotile.passes.registry import PASSES

    ptx_passes = {n for n in PASSES if n.startswith("ptx-")}
    assert len(ptx_passes) >= 7
    covered = {pipeline_of(p) for p in FILES}
    assert ptx_passes <= covered, ptx_passes - covered


@needs_filecheck
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden(path):
    out = run_passes(path.read_text(), pipeline_of(path), path.name)
    check = filecheck(path, out)
    assert check.returncode == 0, check.stderr + "\n" + out


@needs_filecheck
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden_from_the_command_line(path):
    """The RUN line as written: ``python -m nanotile.passes FILE.ptx -p PASS``."""
    result = subprocess.run([sys.executable, "-m", "nanotile.passes", str(path), "-p",
                             pipeline_of(path)], cwd=ROOT, check=False, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    check = filecheck(path, result.stdout)
    assert check.returncode == 0, check.stderr + "\n" + result.stdout


@needs_filecheck
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden_checks_fail_without_the_pass(path):
    unchanged = parse_ptx_program(path.read_text(), path.name).render()
    assert filecheck(path, unchanged).returncode != 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden_output_assembles_and_is_a_fixed_point(path):
    from nanotile.targets.compile import assemble, ptxas_path

    pipeline = pipeline_of(path)
    out = run_passes(path.read_text(), pipeline, path.name)
    if ptxas_path() is not None:
        cubin, _ = assemble(out, parse_ptx_program(out).target)
        assert cubin
    module = load_ptx_module(out)
    changed = False
    for step in parse_pipeline(pipeline):
        changed |= step.apply(module, PassContext())
    assert not changed, f"{pipeline} changed its own output:\n{module.ptx.render()}"
