"""assign-layouts{strategy=eqsat}: greedy's layouts, then the layout e-graph's choice
(layout_egraph.py builds and saturates it, layout_extract.py extracts it by the target's
cost model, layout_costs.py) written over greedy's where the model finds it strictly
cheaper. A kernel where greedy converts nothing around a slot (most kernels), where
no slot has a second candidate, or (without a user's rules) where the extraction over
the candidates of layout_egraph.close_candidates keeps greedy's everywhere, skips egglog
altogether: egglog's rules derive those same candidates.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ...diagnostics import CompileError, Diagnostic
from ...ir.core import Value
from .layout_costs import layout_costs_for
from .layout_egraph import build_problem, close_candidates, greedy_first, saturate, seeds


@dataclass(frozen=True)
class ChoiceSettings:
    """What the pass's options ask of the layout e-graph."""

    gpu: str
    rules: tuple[str, ...] = ()   # the user's layout rule files
    dump_egraph: str = ""         # a folder: the e-graph, the program and the choice
    stats: bool = False           # --time-passes: e-nodes, saturation, extraction
    out: TextIO | None = None     # where stats go (None: standard error)


def choose_layouts(assignment, settings: ChoiceSettings) -> None:
    """Replace greedy's layouts of ``assignment`` (an assign_layouts.Assignment after its
    greedy steps) by the extraction's, where that is cheaper."""
    from .layout_extract import describe, extract

    # greedy's layouts, which what the fixed users want reads: greedy's own work (the
    # pass writes them after the choice too, and then only the types it changed)
    assignment.write_types()
    start = time.perf_counter()
    problem = build_problem(assignment)
    if not settings.rules and not pays_conversion(problem):
        return  # greedy's choice converts nothing: nothing to save
    proposed = seeds(problem, assignment.warps)
    reach = close_candidates(problem, proposed)
    if not settings.rules and all(len(c) < 2 for c in reach.values()):
        return  # no choice to make: no e-graph
    name = str(assignment.entry.attributes.get("sym_name", "kernel")).strip('"@')
    dump = (settings.dump_egraph, f"layouts-{name}") if settings.dump_egraph else None
    model = layout_costs_for(settings.gpu)
    trial = None
    if not settings.rules and dump is None:
        # without a user's rules egglog derives the closure's candidates: where the
        # extraction over them keeps greedy's layouts, the e-graph would too
        trial = _closure_extraction(problem, reach, model, start, settings.stats)
        if all(trial.chosen[slot] == problem.greedy[slot] for slot in problem.slots):
            _print_stats(settings, name, problem, trial)
            return
    derived = saturate(problem, proposed, reach, [_rule_file(f) for f in settings.rules],
                       dump, settings.stats)
    # the problem, its closure, the trial's choice and egglog (not the trial's totals,
    # which only the report asks for)
    problem.seconds = time.perf_counter() - start - (trial.totals_seconds if trial else 0)
    if trial is not None and derived:
        extraction = trial  # egglog derived the candidates extracted from already
        problem.seconds -= trial.seconds  # counted once, as the extraction's
    else:
        extraction = extract(problem, model, settings.stats or dump is not None)
    _write_back(assignment, problem, extraction)
    if dump is not None:
        _write(os.path.join(dump[0], dump[1] + ".choice.txt"), describe(problem, extraction))
        _write(os.path.join(dump[0], dump[1] + ".egg"), problem.program)
    _print_stats(settings, name, problem, extraction)


def _write_back(assignment, problem, extraction) -> None:
    """The extraction's layouts into ``assignment``, where they are not greedy's."""
    for slot, layout in extraction.chosen.items():
        if layout is problem.greedy[slot] or layout == problem.greedy[slot]:
            continue
        if slot in problem.tied:  # a carried value: all that share its layout
            assignment.layout.update(dict.fromkeys(problem.tied[slot], layout))
        elif slot in problem.reduced:  # read in ``layout``, its results in the slice
            assignment.anchor[slot] = layout
            assignment.layout.update(dict.fromkeys(slot.results, problem.held(slot, layout)))
        elif isinstance(slot, Value):
            assignment.layout[slot] = layout
            if slot.owner.name == "load_ptr_tko":
                assignment.anchor[slot.owner] = layout
        else:
            assignment.anchor[slot] = layout


def _closure_extraction(problem, reach: dict, model, start: float, totals: bool):
    """The extraction over the candidates of the closure ``reach`` (no egglog); with
    ``totals``, the model's and the instructions' totals too."""
    from .layout_extract import extract

    problem.candidates = {slot: greedy_first(problem.greedy[slot], reach[slot])
                          for slot in problem.slots}
    problem.seconds = time.perf_counter() - start
    return extract(problem, model, totals)


def _print_stats(settings: ChoiceSettings, name: str, problem, extraction) -> None:
    """--time-passes: e-nodes (0: no e-graph was needed), times and model costs."""
    if not settings.stats:
        return
    out = settings.out or sys.stderr
    candidates = sum(len(c) for c in problem.candidates.values())
    out.write(f"assign-layouts @{name}: {problem.nodes} layout e-nodes, {candidates} "
              f"candidates of {len(problem.slots)} slots, saturation "
              f"{problem.seconds * 1000:.1f} ms, extraction "
              f"{extraction.seconds * 1000:.1f} ms, model cost {extraction.cost} "
              f"(greedy {extraction.greedy_cost}), instructions {extraction.instructions} "
              f"(greedy {extraction.greedy_instructions})\n")


def pays_conversion(problem) -> bool:
    """Greedy's layouts convert some operand of a slot, or for a slot."""
    for edge in problem.edges:
        have = problem.held(edge.operand, problem.greedy[edge.operand]) \
            if edge.operand is not None else edge.have
        want = problem.want(edge, problem.greedy[edge.user]) if edge.user is not None \
            else edge.want
        if want is not None and have != want:
            return True
    return False


def _rule_file(path: str) -> Path:
    if not os.path.isfile(path):
        raise CompileError(Diagnostic("error", f"assign-layouts: no layout rule file "
                                               f"'{path}'", "<command line>"))
    return Path(path)


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise CompileError(Diagnostic("error", f"--dump-egraph: cannot write '{path}': "
                                               f"{e.strerror or e}", "<command line>")
                           ) from None
