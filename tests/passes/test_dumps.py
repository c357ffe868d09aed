"""Every dump of every stage of the default pipeline, for every cuTile corpus kernel, is
valid input: it parses back (Tile IR, or PTX for the ptx stages), is in the stage's
language, and prints the same again."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from nanotile.passes.languages import get_language
from nanotile.passes.manager import RunOptions, run_pipeline
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline

from .support import CUTILE, corpus_text, example_text, kernel_id, needs_text
from .test_cli import reparse, split_dumps

KERNELS = [p for p in corpus_text() if "13_" not in p.name] + example_text()


@needs_text
@pytest.mark.parametrize("path", KERNELS, ids=kernel_id)
def test_every_dump_reparses(path):
    from nanotile.ir.parser import parse_text
    from nanotile.passes.manager import print_ir, step_output

    module = parse_text(path.read_text(), str(path))
    out = io.StringIO()
    steps = parse_pipeline(default_pipeline())
    run_pipeline(module, steps, RunOptions(dump_after=frozenset({"all"})), out)
    dumps = split_dumps(out.getvalue())
    assert len(dumps) == len(steps)
    language = "tile"
    for (_, name, text), step in zip(dumps, steps, strict=True):
        language = step_output(step, language)
        again = reparse(text, language, f"<{path.name} after {name}>")
        assert get_language(language).check(again) == [], name
        assert print_ir(again).strip() == text.strip(), name
    assert get_language(language).ptx  # the pipeline ends in PTX


@needs_text
@pytest.mark.parametrize("path", [p for p in sorted(CUTILE.glob("*.tileirbc"))
                                  if "13_" not in p.name], ids=lambda p: p.stem)
def test_pipeline_output_survives_bytecode(path):
    """What the tile passes produce is well-formed enough for the bytecode writer:
    encoding it and decoding it again gives the same module (same printed text)."""
    pytest.importorskip("nanotile.bytecode.writer")
    from nanotile.bytecode.reader import read_bytecode
    from nanotile.bytecode.writer import write_bytecode
    from nanotile.ir.printer import print_module
    from nanotile.loader import load_file
    from nanotile.passes.languages import LANGUAGES
    from nanotile.passes.manager import step_output

    module = load_file(str(path))
    order = list(LANGUAGES)  # top to bottom
    tile_steps, language = [], "tile"  # the stages bytecode can hold: above tile-layout
    for step in parse_pipeline(default_pipeline()):
        language = step_output(step, language)
        if order.index(language) >= order.index("tile-layout"):
            break
        # TMA's ops (tma_load, tma_store) are nanotile's own, with no bytecode form:
        # the other tile passes' output is checked without them
        if not step.name.startswith("select-tma"):
            tile_steps.append(step)
    assert [s.name for s in tile_steps][-3:] == ["lower-views", "resolve-tokens",
                                                 "lower-constants"]
    run_pipeline(module, tile_steps)
    again = read_bytecode(write_bytecode(module), "<rewritten>")
    # The facts passes record (nanotile.facts, nanotile.args) are nanotile's own
    # annotations: the bytecode format has no place for them, and the rest must survive.
    assert "nanotile.facts" in print_module(module)
    _drop_nanotile_attributes(module)
    assert print_module(again) == print_module(module)


def _drop_nanotile_attributes(module) -> None:
    from nanotile.ir.rewrite import all_ops
    for op in [*module.items, *all_ops(module)]:
        for name in [n for n in op.attributes if n.startswith("nanotile.")]:
            del op.attributes[name]


def test_dump_diff_shows_removed_ptx_instructions(capsys):
    """--dump-diff prints a stage as a unified diff of the pass's input: ptx-dead-code's
    shows '-' lines for the instructions it removed and no unchanged listing."""
    from nanotile.driver import main

    axpy = Path(__file__).resolve().parents[2] / "examples" / "axpy.mlir"
    assert main([str(axpy), "--emit=ptx", "--gpu-name=sm_90", "--dump-after=ptx-dead-code",
                 "--dump-diff", "-o", "/dev/null"]) == 0
    err = capsys.readouterr().err
    assert "// -----// IR Dump After ptx-dead-code //----- //" in err
    assert "--- before ptx-dead-code" in err and "+++ after ptx-dead-code" in err
    removed = [line for line in err.splitlines() if line.startswith("-\t")]
    assert any("ld.param.u32" in line for line in removed)
    assert ".version" not in err  # only the hunks, not the whole program
