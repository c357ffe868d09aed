"""The questions of lab 1, part 1, and how their true answers are found.

Each answer is computed from the project as it is now (the example files, the bytecode
writer, the default pipeline, the interpreter), the way a student finds it with the
command line: nothing here is a stored answer, so the questions stay right when the
compiler changes.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import nanotile
from nanotile.ir.core import Module, Operation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGET = "sm_100"  # the default target, whose pipeline `nanotile FILE --dump-after=all` runs


@dataclass(frozen=True)
class Question:
    """``name`` is the constant of starter/answers.py that holds the student's answer."""

    name: str
    text: str
    truth: Callable[[], object]


def tile_stages(path: Path) -> Iterator[tuple[str, str, Module]]:
    """(pass name, language after it, the module after it) for each pass of the default
    pipeline while the module is Tile IR (what --dump-after=all prints before the PTX).
    The module is edited in place by the next pass: use it before asking for the next."""
    import nanotile.targets  # registers the back end's passes, named in the pipeline
    from nanotile.passes.languages import get_language
    from nanotile.passes.manager import RunOptions, run_pipeline, step_output
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    module = nanotile.load(str(path))
    steps = parse_pipeline(default_pipeline(TARGET))
    language = steps[0].input
    for step in steps:
        run_pipeline(module, [step], RunOptions(input_language=language))
        language = step_output(step, language)
        if not get_language(language).tile_level:
            return
        yield step.name, language, module


def entry_ops(module: Module) -> list[Operation]:
    """Every op of the module's (only) kernel, nested ones and terminators included."""
    entry = module.entries()[0]
    return [op for op in entry.walk() if op is not entry]


def first_stage(path: Path, holds: Callable[[Module], bool]) -> tuple[str, str]:
    """(pass, language) of the first stage of ``path``'s pipeline where ``holds``."""
    for name, language, module in tile_stages(path):
        if holds(module):
            return name, language
    raise AssertionError(f"no tile-level stage of {path.name} qualifies")


def bytecode_version() -> str:
    from nanotile.bytecode.wire import MAGIC

    data = (EXAMPLES / "axpy.tileirbc").read_bytes()
    return f"{data[len(MAGIC)]}.{data[len(MAGIC) + 1]}"


def bytecode_size_13_1() -> int:
    from nanotile.bytecode.writer import write_bytecode

    return len(write_bytecode(nanotile.load(str(EXAMPLES / "axpy.mlir")), (13, 1)))


def _block_id_queries(module: Module) -> int:
    return sum(op.name == "get_tile_block_id" for op in entry_ops(module))


def pass_merging_block_ids() -> str:
    return first_stage(EXAMPLES / "matmul_f16.tileirbc",
                       lambda m: _block_id_queries(m) == 1)[0]


def _without_views(module: Module) -> bool:
    return not any("view" in op.name for op in entry_ops(module))


def first_pass_without_views() -> str:
    return first_stage(EXAMPLES / "axpy.tileirbc", _without_views)[0]


def language_without_views() -> str:
    return first_stage(EXAMPLES / "axpy.tileirbc", _without_views)[1]


def softmax_ops_after_cse() -> int:
    for name, _, module in tile_stages(EXAMPLES / "softmax_rows.tileirbc"):
        if name == "cse":
            return len(entry_ops(module))
    raise AssertionError("the default pipeline has no cse")


def rms_norm_executed_ops() -> int:
    """Lines `nanotile run examples/rms_norm.tileirbc --grid 1 --trace` logs (one per op
    executed; the values do not change which ops run)."""
    from nanotile.interp import cutile_args

    rows, columns = 1, 200
    x = np.ones((rows, columns), np.float32)
    weight = np.ones(columns, np.float32)
    out = np.zeros_like(x)
    trace = io.StringIO()
    nanotile.run(str(EXAMPLES / "rms_norm.tileirbc"), "rms_norm", 1,
                 *cutile_args(x, weight, out, np.float32(1e-5)), trace=trace)
    return len(trace.getvalue().splitlines())


QUESTIONS = [
    Question("BYTECODE_VERSION", "Which bytecode version does examples/axpy.tileirbc "
             "declare in its header? A string \"major.minor\".", bytecode_version),
    Question("BYTECODE_SIZE_13_1", "How many bytes does `nanotile examples/axpy.mlir "
             "--emit=bytecode --bytecode-version=13.1 -o FILE` write?", bytecode_size_13_1),
    Question("PASS_MERGING_BLOCK_ID_QUERIES", "examples/matmul_f16.tileirbc asks for the "
             "tile block id twice. After which pass of the default pipeline is there one "
             "get_tile_block_id left? The pass's name.", pass_merging_block_ids),
    Question("FIRST_PASS_WITHOUT_VIEWS", "After which pass of the default pipeline does "
             "examples/axpy.tileirbc first have no view op left (make_tensor_view, "
             "make_partition_view, load_view_tko, store_view_tko)?", first_pass_without_views),
    Question("LANGUAGE_WITHOUT_VIEWS", "In which language (tile, tile-canon, ...) is the "
             "module after that pass?", language_without_views),
    Question("SOFTMAX_OPS_AFTER_CSE", "How many ops does @softmax_rows have after the pass "
             "cse? Count every op inside the entry, the ops of the reduce bodies and the "
             "terminators (yield, return) included.", softmax_ops_after_cse),
    Question("RMS_NORM_EXECUTED_OPS", "How many ops does the interpreter execute for "
             "examples/rms_norm.tileirbc on grid 1 (the lines of `nanotile run ... --trace`)?",
             rms_norm_executed_ops),
]
