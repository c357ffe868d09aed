"""eqsat's prefilter (nanotile/egraph/prefilter.py): which kernels a changing rule could
match, and that leaving egglog out where none could gives what egglog gives."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from nanotile.egraph import prefilter
from nanotile.egraph.bridge import Encoder
from nanotile.egraph.cost import CostModel
from nanotile.egraph.engine import Program, builtin_rule_files
from nanotile.egraph.prefilter import EncodedDag
from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module
from nanotile.ir.rewrite import blocks_of, collect_uses

REPO = Path(__file__).resolve().parents[2]
CORPUS = (REPO / ".." / "shared" / "corpus").resolve()


def kernel(body: str, args: str = "%x: tile<f32>, %y: tile<f32>, %i: tile<i32>, "
                                    "%j: tile<i32>") -> str:
    return f"""cuda_tile.module @m {{
  entry @k(%p: tile<ptr<f32>>, %q: tile<ptr<i1>>, {args}) {{
{body}
    return
  }}
}}
"""


def could_change(text: str, rule_files: list[Path] | None = None,
                 rulesets: list[str] | None = None) -> bool:
    module = parse_text(text, "<k>")
    entry = next(op for op in module.walk() if op.name == "entry")
    encoder = Encoder({}, collect_uses(module))
    for block in blocks_of(entry):
        encoder.encode_block(block)
    program = Program.shared(CostModel(), builtin_rule_files() + (rule_files or []))
    scheduled = program.rulesets if rulesets is None else rulesets
    return program.shapes.could_change(scheduled, EncodedDag(encoder.terms))


STORE_F = "    %t = store_ptr_tko weak %p, %r : tile<ptr<f32>>, tile<f32> -> token"
STORE_I1 = "    %t = store_ptr_tko weak %q, %r : tile<ptr<i1>>, tile<i1> -> token"


@pytest.mark.parametrize("body, expected", [
    # x * 2.0: no built-in rule (x / 2^k and x * 2^k are left alone)
    ("%c = constant <f32: 2.0> : tile<f32>\n%r = mulf %x, %c : tile<f32>\n" + STORE_F, False),
    # x * 1.0 => x (float-identities): the literal decides
    ("%c = constant <f32: 1.0> : tile<f32>\n%r = mulf %x, %c : tile<f32>\n" + STORE_F, True),
    # (Cmpi x x "equal" ...): one variable twice is one value twice
    ("%r = cmpi equal %i, %i, signed : tile<i32> -> tile<i1>\n" + STORE_I1, True),
    ("%r = cmpi equal %i, %j, signed : tile<i32> -> tile<i1>\n" + STORE_I1, False),
    # a reshape to the type it has is no reshape: (= t (TypeOf x)), TypeOf a projection
    ("%s = reshape %x : tile<f32> -> tile<1xf32>\n"
     "%r = reshape %s : tile<1xf32> -> tile<f32>\n" + STORE_F, True),
    ("%r0 = addf %x, %y : tile<f32>\n%s = reshape %r0 : tile<f32> -> tile<1xf32>\n"
     "%t = store_ptr_tko weak %p, %x : tile<ptr<f32>>, tile<f32> -> token\n"
     "%u = reshape %y : tile<f32> -> tile<1x1xf32>\n"
     "%r = reshape %s : tile<1xf32> -> tile<1x1xf32>\n"
     "%w = reshape %r : tile<1x1xf32> -> tile<1xf32>\n"
     "%v = reshape %w : tile<1xf32> -> tile<f32>\n"
     "%t2 = store_ptr_tko weak %p, %v : tile<ptr<f32>>, tile<f32> -> token", True),
])
def test_what_the_built_in_rules_could_match(body, expected):
    indented = "\n".join("    " + line for line in body.splitlines())
    assert could_change(kernel(indented)) is expected


def test_a_reshape_to_another_type_matches_no_rule():
    body = ("    %s = reshape %x : tile<f32> -> tile<1xf32>\n"
            "    %t = store_ptr_tko weak %p, %x : tile<ptr<f32>>, tile<f32> -> token\n"
            "    %b = broadcast %s : tile<1xf32> -> tile<4xf32>\n"
            "    %u = reshape %b : tile<4xf32> -> tile<2x2xf32>\n"
            "    %v = reshape %u : tile<2x2xf32> -> tile<4xf32>")
    # (Reshape (Reshape x)) matches %v; with the middle reshape gone nothing does
    assert could_change(kernel(body + "\n    %r = reshape %v : tile<4xf32> -> tile<4xf32>"))
    plain = body.replace("%u = reshape %b : tile<4xf32> -> tile<2x2xf32>",
                         "%u = exp %b : tile<4xf32>").replace(
        "%v = reshape %u : tile<2x2xf32> -> tile<4xf32>", "%v = absf %u : tile<4xf32>")
    assert not could_change(kernel(plain))


def test_user_rules_count_and_rules_asserting_facts_do_not(tmp_path):
    text = kernel("    %c = constant <f32: 2.0> : tile<f32>\n"
                  "    %r = mulf %x, %c : tile<f32>\n" + STORE_F)
    double = tmp_path / "double.egg"
    double.write_text("(ruleset double)\n"
                      "(rewrite (Mulf x (ConstF 2.0 t) r z t) (Addf x x r z t) "
                      ":ruleset double)\n")
    facts = tmp_path / "facts.egg"
    facts.write_text("(ruleset mul-facts)\n"
                     "(rule ((= e (Mulf x y r z t))) ((NonNeg e)) :ruleset mul-facts)\n"
                     "(ruleset mul-union)\n"
                     "(rule ((= e (Mulf x y r z t))) ((union e x)) :ruleset mul-union)\n")
    assert could_change(text, [double], ["double"])
    assert not could_change(text, [facts], ["mul-facts"])
    assert could_change(text, [facts], ["mul-union"])
    assert not could_change(text, [double], [])


def _kernels() -> list[Path]:
    found = sorted((REPO / "examples").glob("*.mlir"))
    found += sorted((REPO / "tests" / "passes" / "golden").glob("eqsat*.mlir"))
    found += sorted((CORPUS / "cutile").glob("*.tileirbc"))
    found += sorted((CORPUS / "cutile-tests").glob("*.tileirbc"))[::60]
    return found


@pytest.mark.parametrize("path", _kernels(), ids=lambda p: p.stem)
def test_without_egglog_the_pipeline_gives_what_egglog_gives(path, monkeypatch):
    """Where no rule could match, the IR after eqsat is the one egglog's saturation and
    extraction give (forced to run), and their saturation matched no changing rule."""
    from nanotile.egraph import engine

    answers: list[bool] = []
    matches: list[int] = []
    original = prefilter.RuleShapes.could_change
    saturate = engine.Program.saturate

    def recording(self, rulesets, dag):
        answers.append(original(self, rulesets, dag))
        return True

    def counting(self, rulesets, limits, stats):
        saturate(self, rulesets, limits, stats)
        matches.append(sum(n for name, n in stats.ruleset_matches.items()
                           if not name.endswith("-facts")))

    monkeypatch.setattr(engine.Program, "saturate", counting)
    monkeypatch.setattr(prefilter.RuleShapes, "could_change", recording)
    forced = _run_to_eqsat(str(path))
    monkeypatch.undo()
    assert all(n == 0 for answer, n in zip(answers, matches, strict=True) if not answer)
    assert _run_to_eqsat(str(path)) == forced


def _run_to_eqsat(path: str) -> str:
    from nanotile.loader import load_file
    from nanotile.passes.manager import PipelineRun, RunOptions
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    pipeline = default_pipeline("sm_90")
    end = pipeline.index("eqsat{target=sm_90}") + len("eqsat{target=sm_90}")
    module = load_file(path)
    PipelineRun(RunOptions(), io.StringIO()).run(module, parse_pipeline(pipeline[:end]))
    return print_module(module)


def test_statistics_say_when_no_e_graph_was_made(capsys):
    """--time-passes (the pass's ``stats``) shows what ran: no e-graph where no rule could
    match, the e-nodes of one where a rule could."""
    from nanotile.passes.manager import RunOptions, run_pipeline
    from nanotile.passes.registry import parse_pipeline

    def stats(body: str) -> str:
        module = parse_text(kernel(body), "<k>")
        run_pipeline(module, parse_pipeline("eqsat{stats=true}"), RunOptions())
        return capsys.readouterr().err

    two = ("    %c = constant <f32: 2.0> : tile<f32>\n    %r = mulf %x, %c : tile<f32>\n"
           + STORE_F)
    assert "eqsat @k: 0 e-nodes: no rule could match its 3 terms, no e-graph" in stats(two)
    one = stats(two.replace("2.0", "1.0"))
    assert "no rule could match" not in one and " e-classes, " in one
