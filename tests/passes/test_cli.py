"""The pipeline flags, through ``python -m nanotile.passes`` (cli_options.main) and, when
the driver has them, through ``nanotile``: listings, dumps that parse back, --dump-dir,
-p, --stop-after, --start-after, --time-passes, --check-semantics, errors."""

from __future__ import annotations

import re

import pytest

from nanotile import cli_options
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import PASSES

from .support import EXAMPLES, needs_interp, needs_text
from .test_manager import AddBecomesSub, ClaimsCanonKeepsAssume

LAYERNORM = str(EXAMPLES / "rms_norm.mlir")  # a layernorm-like kernel: a row reduction
HEADER = re.compile(r"^// -----// IR Dump (Before|After) (\S+?(?:{[^}]*})?)( Failed)? //----- //$", re.MULTILINE)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli_options.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def split_dumps(text: str) -> list[tuple[str, str, str]]:
    """(kind, pass, IR text) for each dump in ``text``."""
    marks = list(HEADER.finditer(text))
    return [(m.group(1), m.group(2), text[m.end():marks[i + 1].start() if i + 1 < len(marks)
                                           else len(text)])
            for i, m in enumerate(marks)]


def reparse(text: str, language: str, where: str):
    """A dump read back as the module it shows: Tile IR text, or for a ptx stage PTX text
    (a module whose ``ptx`` is the parsed program, rendering the same text again)."""
    from nanotile.ir.core import Module
    from nanotile.ir.parser import parse_text
    from nanotile.passes.languages import get_language
    from nanotile.targets.ptx.ir import parse_ptx_program

    if not get_language(language).ptx:
        return parse_text(text, where)
    program = parse_ptx_program(text, where)
    assert program.render().strip() == text.strip(), where
    return Module(ptx=program)


# -- listings (no input file needed) -----------------------------------------------------


def test_list_passes(capsys):
    status, out, _ = run(capsys, "--list-passes")
    assert status == 0
    for name, cls in PASSES.items():
        assert re.search(rf"^\s+{name}\s+{cls.input} -> ", out, re.MULTILINE), name
    assert re.search(r"^  assume-to-facts +tile -> tile-canon +Turn assume ops", out,
                     re.MULTILINE)
    assert re.search(r"^  select-instructions +simt -> ptx-sm100 ", out, re.MULTILINE)


def test_print_language_and_diff(capsys):
    status, out, _ = run(capsys, "--print-language", "tile-ordered")
    assert status == 0 and out.startswith("language tile-ordered extends tile-ptr")
    assert "no-token-operands:" in out and " join_tokens" not in out
    status, out, _ = run(capsys, "--diff-languages", "tile-ptr", "tile-ordered")
    assert status == 0
    assert out.splitlines() == ["language tile-ordered relative to tile-ptr:",
                                "  - op join_tokens", "  - op make_token",
                                "  + invariant no-token-operands"]


def test_print_language_without_a_name_lists_the_languages_passes_write(capsys):
    status, out, _ = run(capsys, "--print-language")
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == \
        ["tile", "tile-canon", "tile-opt", "tile-ptr", "tile-ordered", "tile-layout", "simt",
         "ptx-sm90", "ptx-sm100"]
    assert re.search(r"^  tile-ptr +lower-views +Views lowered", out, re.MULTILINE)
    assert re.search(r"^  tile-ordered +resolve-tokens +Tokens resolved", out, re.MULTILINE)


def test_a_language_no_pass_writes_is_marked(capsys, monkeypatch):
    from nanotile.passes import languages

    unwritten = languages.TILE_PTR.extend("tile-unwritten", "A stage no pass reaches.")
    monkeypatch.setitem(languages.LANGUAGES, unwritten.name, unwritten)
    assert run(capsys, "--print-language", "tile-unwritten")[1].endswith(
        "no registered pass writes it)\n")
    assert "tile-unwritten" not in run(capsys, "--print-language")[1]
    assert "no registered pass" not in run(capsys, "--print-language", "tile-ordered")[1]


def test_print_pipeline(capsys):
    from nanotile.passes.registry import parse_pipeline

    assert run(capsys, "--print-pipeline")[1].strip() == \
        ",".join(s.spelling() for s in parse_pipeline(default_pipeline()))
    assert run(capsys, "--print-pipeline", "-p", "dce{remove-loads=false},cse")[1].strip() \
        == "dce{remove-loads=False},cse"


@pytest.mark.parametrize("argv, message", [
    (["--print-language", "tile-foo"], "unknown language 'tile-foo'"),
    (["--print-pipeline", "-p", "cse,bogus"], "unknown pass 'bogus'"),
    (["--diff-languages", "tile", "nope"], "unknown language 'nope'"),
])
def test_user_errors_are_diagnostics_not_tracebacks(capsys, argv, message):
    status, _, err = run(capsys, *argv)
    assert status == 1 and message in err and "Traceback" not in err


# -- running pipelines over files (needs the text parser and printer) --------------------


@needs_text
def test_dump_after_all_prints_every_stage_and_each_reparses(capsys):
    from nanotile.passes.languages import get_language
    from nanotile.passes.manager import step_output
    from nanotile.passes.registry import parse_pipeline

    status, out, err = run(capsys, LAYERNORM, "--dump-after=all")
    assert status == 0, err
    dumps = split_dumps(err)
    steps = parse_pipeline(default_pipeline())
    assert [name for _, name, _ in dumps] == [s.spelling() for s in steps]
    language = "tile"
    for (_, name, text), step in zip(dumps, steps):
        language = step_output(step, language)
        module = reparse(text, language, f"<dump after {name}>")
        assert get_language(language).check(module) == [], name
    assert language == "ptx-sm100" and out.startswith("//\n// Generated by nanotile")
    assert dumps[-1][2].strip() == out.strip()  # the last stage is the output


@needs_text
def test_dump_before_and_after_selected_passes(capsys):
    _, _, err = run(capsys, LAYERNORM, "--dump-before=cse", "--dump-after=cse,dce")
    assert [(k, n) for k, n, _ in split_dumps(err)] == [("Before", "cse"), ("After", "cse"),
                                                      ("After", "dce")]


@needs_text
def test_dump_after_change_skips_passes_that_change_nothing(capsys):
    _, _, err = run(capsys, LAYERNORM, "-p", "cse,cse,loop-invariant-code-motion",
                    "--dump-after-change")
    assert [n for _, n, _ in split_dumps(err)] == ["cse"]


@needs_text
def test_dump_dir_writes_one_numbered_file_per_stage(capsys, tmp_path):
    from nanotile.ir.parser import parse_text

    status, out, _ = run(capsys, LAYERNORM, f"--dump-dir={tmp_path}", "-p", "cse,dce")
    assert status == 0
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["00-input.mlir", "01-cse.mlir", "02-dce.mlir"]
    for name in files:
        parse_text((tmp_path / name).read_text(), name)
    assert (tmp_path / "02-dce.mlir").read_text().split("\n", 1)[1].strip() == out.strip()


@needs_text
def test_custom_pipeline_and_stop_after(capsys):
    _, out, _ = run(capsys, LAYERNORM, "-p", "assume-to-facts,dce")
    assert "assume" not in out and "constant" in out
    _, out, _ = run(capsys, LAYERNORM, "--stop-after=simplify-grid-queries")
    assert "assume" not in out  # assume-to-facts ran ...
    assert out.count("constant <i32: 0>") == 3  # ... but not cse


@needs_text
def test_start_after_resumes_from_a_dump(capsys, tmp_path):
    # --no-ptx-loc: the dump prints no loc(...), so the resumed PTX could not name the
    # original lines in .loc; everything else must be the same
    _, full, _ = run(capsys, LAYERNORM, "--no-ptx-loc")
    _, _, err = run(capsys, LAYERNORM, "--dump-after=simplify-tokens")
    dump = tmp_path / "after-tokens.mlir"
    dump.write_text(err)
    status, resumed, err = run(capsys, str(dump), "--start-after=simplify-tokens",
                               "--dump-after=all", "--no-ptx-loc")
    assert status == 0, err
    from nanotile.passes.registry import parse_pipeline

    # --no-ptx-loc is select-instructions{loc=false} in the resumed run's stage names
    steps = [s.spelling().replace("}", " loc=false}") if s.name == "select-instructions"
             else s.spelling() for s in parse_pipeline(default_pipeline())]
    assert [n for _, n, _ in split_dumps(err)] == steps[steps.index("simplify-tokens") + 1:]
    assert resumed == full


@needs_text
def test_time_passes(capsys):
    from nanotile.passes.registry import parse_pipeline

    status, _, err = run(capsys, LAYERNORM, "--time-passes")
    assert status == 0 and "Execution time report" in err
    for step in parse_pipeline(default_pipeline()):
        assert len(re.findall(rf"\(\s*\d+\.\d%\)\s+{step.name}$", err, re.MULTILINE)) == 1, \
            step.name


@needs_text
def test_verify_failure_names_pass_and_dumps_on_failure(capsys, monkeypatch):
    monkeypatch.setitem(PASSES, "broken-canon", ClaimsCanonKeepsAssume)
    status, _, err = run(capsys, LAYERNORM, "-p", "cse,broken-canon",
                         "--dump-after-failure")
    assert status == 1
    assert "// -----// IR Dump After broken-canon Failed //----- //" in err
    assert re.search(r"error: after pass 'broken-canon' \(output language tile-canon\): "
                     r"op 'assume' is not part of language 'tile-canon'", err)
    status, _, err = run(capsys, LAYERNORM, "-p", "cse,broken-canon", "--no-verify")
    assert status == 0


@needs_text
@needs_interp
def test_check_semantics_flag(capsys, monkeypatch):
    status, _, err = run(capsys, LAYERNORM, "--check-semantics")
    assert status == 0, err
    monkeypatch.setitem(PASSES, "broken-add", AddBecomesSub)
    status, _, err = run(capsys, LAYERNORM, "-p", "cse,broken-add,dce", "--check-semantics")
    assert status == 1
    assert "error: pass 'broken-add' changed what the program computes: kernel @rms_norm" \
        in err


NEVER_ENDS = """entry @spin(%p: tile<ptr<i32>>) {
  %x, %y, %z = get_tile_block_id : tile<i32>
  %zero = constant <i32: 0> : tile<i32>
  %first = cmpi equal %x, %zero, signed : tile<i32> -> tile<i1>
  loop {
    if %first {
      break
    }
    continue
  }
  return
}
"""


@needs_text
@needs_interp
def test_check_semantics_names_the_kernel_it_cannot_run(capsys, tmp_path):
    """make_inputs runs two tile blocks, and block 1 never leaves the loop: one located
    error line at the entry (exit 1), not a hang or a traceback."""
    path = tmp_path / "spin.mlir"
    path.write_text(NEVER_ENDS)
    status, _, err = run(capsys, str(path), "--check-semantics")
    assert status == 1
    first = err.splitlines()[0]
    assert first.startswith(f"{path}:1:1: error: --check-semantics: kernel @spin failed to "
                            "run on the input: tile block (1, 0, 0): 'loop'"), first
    assert "never ends" in first and "Traceback" not in err


# a view of 2**51 + 16 elements, of which the kernel reads 16 (from bench/fuzz.py: a
# mutated corpus kernel); make_inputs sizes the array to the view
_BIG = "tensor_view<2251799813685264xi16, strides=[1]>"
_SMALL = "tensor_view<16xi16, strides=[1]>"
HUGE_VIEW = f"""entry @huge_view(%src: tile<ptr<i16>>, %dst: tile<ptr<i16>>) {{
  %t = make_token : token
  %zero = constant <i32: 0> : tile<i32>
  %none = constant <i64: 0> : tile<i64>
  %p = offset %src, %none : tile<ptr<i16>>, tile<i64> -> tile<ptr<i16>>
  %in = make_tensor_view %p, shape = [2251799813685264], strides = [1] : {_BIG}
  %out = make_tensor_view %dst, shape = [16], strides = [1] : {_SMALL}
  %pin = make_partition_view %in : partition_view<tile=(16), {_BIG}>
  %pout = make_partition_view %out : partition_view<tile=(16), {_SMALL}>
  %v, %t1 = load_view_tko weak %pin[%zero] token = %t
    : partition_view<tile=(16), {_BIG}>, tile<i32> -> tile<16xi16>, token
  %t2 = store_view_tko weak %v, %pout[%zero] token = %t1
    : tile<16xi16>, partition_view<tile=(16), {_SMALL}>, tile<i32> -> token
  return
}}
"""


@needs_text
@needs_interp
def test_check_semantics_refuses_an_array_it_cannot_make(capsys, tmp_path):
    """An input array too large to generate: one located error line at the entry (exit
    1), not NumPy's failed allocation."""
    path = tmp_path / "huge.mlir"
    path.write_text(HUGE_VIEW)
    status, out, err = run(capsys, str(path), "--check-semantics")
    assert status == 1 and not out
    first = err.splitlines()[0]
    assert first.startswith(f"{path}:1:1: error: --check-semantics: an array argument of "
                            "2251799813685264 elements is more than"), first
    assert "Traceback" not in err


def test_parse_known_leaves_the_drivers_options():
    args, rest = cli_options.parse_known(["k.mlir", "-o", "out.mlir", "--dump-after=cse",
                                          "-p", "cse,dce", "--emit=text", "--no-verify",
                                          "--time-passes", "--gpu-name=sm_90"])
    assert rest == ["k.mlir", "-o", "out.mlir", "--emit=text", "--no-verify",
                    "--gpu-name=sm_90"]
    assert args.target == "sm_90"
    assert args.dump_after == "cse" and args.pipeline == "cse,dce" and args.time_passes
    assert args.no_verify


def test_no_pipeline_flag_means_no_pipeline():
    from nanotile.ir.core import Module

    args, _ = cli_options.parse_known(["k.mlir"])
    module = Module()
    assert cli_options.run_from_args(module, args, None, None) is module


def test_mlir_spellings_of_the_flags():
    args, rest = cli_options.parse_known(["--mlir-print-ir-after-all", "--mlir-timing",
                                          "--mlir-print-ir-tree-dir=d",
                                          "--mlir-print-ir-after-change"])
    assert rest == []
    assert args.dump_after == "all" and args.time_passes and args.dump_dir == "d"
    assert args.dump_after_change
