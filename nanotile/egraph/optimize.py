"""Equality saturation over a module, one e-graph per item (kernel).

For each item: encode its pure dataflow (bridge.Encoder), insert the terms into the
loaded schema and rules (engine.Program.shared, one session per e-graph), run the
schedule (engine.Program.saturate), extract every root at once and rebuild the blocks
(bridge.Rebuilder). An item that cannot be rebuilt is left alone. When no rule that
changes an e-graph could match the item's terms (prefilter.RuleShapes, decided on the
encoded terms in Python), no e-graph is made: the blocks are rebuilt from the encoded
terms themselves (prefilter.EncodedDag), which is what the extraction would return, and
egglog's session (the copy of the loaded e-graph it makes) is saved; with the built-in
rules alone, that decision needs them parsed only, not loaded (engine.outline). The
dumps of the e-graph and the rule statistics always make it.

An item with more pure ops than ``Limits.window`` is optimised in windows: runs of
consecutive ops of one block holding at most that many, one e-graph each, in program
order (a loop holding more is split inside its body). A window encodes and rebuilds only
its own run: the values it reads from before it are leaves (constants are terms the
rules see, left where they are), and its values read after it are roots rebuilt at its
end; the uses of values are collected once per item. So time and memory grow linearly
with the item. Rules then cannot combine ops of two windows; the default window is
larger than any kernel of the corpora.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..diagnostics import CompileError, Diagnostic
from ..ir.core import Block, Module, Operation, Value
from ..ir.rewrite import blocks_of, collect_uses, replace_uses
from .bridge import Encoder, Fallback, Rebuilder, UnknownLeaf, is_term
from .cost import CostModel, cost_model_for
from .engine import (Limits, Outline, Program, Stats, builtin_rule_files, find_leaf_literal,
                     outline)
from .prefilter import EncodedDag


@dataclass
class Settings:
    """What one eqsat run uses and reports."""

    rule_files: list[Path]
    rulesets: list[str] | None = None  # None: every ruleset loaded (but ``exclude``)
    exclude: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    cost: CostModel = field(default_factory=CostModel)
    fast_math: bool = False
    dump_egglog: bool = False
    dump_egraph: str | None = None
    stats: bool = False
    rule_stats: bool = False  # --rule-stats: matches per rule and ruleset
    # rules left out, by Rule.place (--check-semantics bisecting, nanotile.egraph.bisect)
    disabled: frozenset[tuple[str, int, int]] = frozenset()
    pass_name: str = "eqsat"
    out: TextIO = field(default_factory=lambda: sys.stderr)


def rule_files(user_files: list[str], builtin: bool = True) -> list[Path]:
    files = builtin_rule_files() if builtin else []
    return files + [Path(f) for f in user_files]


def settings_for(step: Any, rulesets: list[str] | None,
                 exclude: tuple[str, ...] = ()) -> Settings:
    """The settings of an e-graph pass (eqsat, fuse-fma): its options are fields of
    ``step``."""
    files = rule_files([f.strip() for f in step.rules.split(",") if f.strip()],
                       step.builtin)
    limits = Limits(step.iterations, step.node_limit, float(step.time_limit),
                    window=getattr(step, "window", Limits.window))
    return Settings(files, rulesets, exclude, limits, cost_model_for(step.target),
                    fast_math=step.fast_math,
                    dump_egglog=step.dump_egglog, dump_egraph=step.dump_egraph or None,
                    stats=step.stats, rule_stats=step.rule_stats, pass_name=step.name)


def optimize_module(module: Module, facts: dict, settings: Settings) -> bool:
    """Run equality saturation over every item; True if anything changed."""
    changed = False
    for item in module.items:
        if item.regions:
            changed |= optimize_item(module, item, facts, settings)
    return changed


def optimize_item(module: Module, item: Operation, facts: dict, settings: Settings) -> bool:
    windows = _windows(item, settings.limits.window)
    changed = False
    uses = collect_uses(module)
    for number, window in enumerate(windows, 1):
        place = (number, len(windows)) if len(windows) > 1 else None
        changed |= _optimize(module, item, facts, settings, window, place, uses)
    return changed


@dataclass
class Window:
    """A run of consecutive ops of one block (with the blocks nested in them) that is
    optimised by one e-graph. Its ops are found again by identity: the windows before it
    rebuild only their own runs."""

    block: Block
    first: Operation
    last: Operation

    def span(self) -> tuple[int, int]:
        """Where the run is in its block now: ``block.ops[start:stop]``."""
        start = self.block.ops.index(self.first)
        return start, self.block.ops.index(self.last, start) + 1


def _windows(item: Operation, size: int) -> list[Window | None]:
    """The windows of ``item``, each with at most ``size`` term ops (constants aside), in
    program order; [None] (one e-graph for everything) when the item has no more. An op
    holding more than ``size`` (a loop) is in no window: its blocks are split instead."""
    counts: dict[int, int] = {}
    total = sum(_count_terms(op, counts) for block in blocks_of(item) for op in block.ops)
    if total <= size:
        return [None]
    windows: list[Window | None] = []
    for block in blocks_of(item):
        _split(block, size, counts, windows)
    return windows


def _count_terms(op: Operation, counts: dict[int, int]) -> int:
    """The term ops (constants aside) in ``op`` and the blocks nested in it."""
    count = int(is_term(op) and op.name != "constant")
    for block in blocks_of(op):
        count += sum(_count_terms(inner, counts) for inner in block.ops)
    counts[id(op)] = count
    return count


def _split(block: Block, size: int, counts: dict[int, int],
           windows: list[Window | None]) -> None:
    run: list[Operation] = []
    count = 0
    for op in block.ops:
        inside = counts[id(op)]
        if inside > size or (count + inside > size and count):
            if count:
                windows.append(Window(block, run[0], run[-1]))
            run, count = [], 0
        if inside > size:
            for inner in blocks_of(op):
                _split(inner, size, counts, windows)
            continue
        run.append(op)
        count += inside
    if count:
        windows.append(Window(block, run[0], run[-1]))


def _optimize(module: Module, item: Operation, facts: dict, settings: Settings,
              window: Window | None, place: tuple[int, int] | None, uses: dict) -> bool:
    """One e-graph: the item's terms, or those of one window (``place``: its number and
    the number of windows)."""
    label = f" (window {place[0]}/{place[1]})" if place else ""
    enc = Encoder(facts, uses)
    try:
        if window is None:
            for block in blocks_of(item):
                enc.encode_block(block)
        else:
            enc.encode_window(window.block, *window.span())
    except Fallback as reason:
        return _left_alone(settings, item, str(reason))
    if len(enc.names) > settings.limits.terms:
        if settings.stats:
            settings.out.write(f"{settings.pass_name} @{item.attributes.get('sym_name')}"
                               f"{label}: {len(enc.names)} terms, over the limit; left "
                               "alone\n")
        return False
    rules = outline(settings.cost, settings.rule_files, settings.disabled)
    check_rulesets(rules, settings)
    if not enc.roots and not _reports(settings):
        return False  # nothing to rewrite, nothing to show: no e-graph
    rulesets = schedule(rules, settings)
    dag = EncodedDag(enc.terms)
    if not _shows_egraph(settings) and not rules.shapes.could_change(rulesets, dag):
        # no rule can match: what egglog would extract is the encoded terms themselves
        if settings.stats:
            settings.out.write(f"{settings.pass_name} @{item.attributes.get('sym_name')}"
                               f"{label}: 0 e-nodes: no rule could match its "
                               f"{len(enc.terms)} terms, no e-graph\n")
        return _rebuild_or_leave(item, enc, dag, [dag.of_name[enc.names[r]] for r in enc.roots],
                                 settings, window, module)
    program = Program.shared(settings.cost, settings.rule_files, settings.disabled)
    with program.session():
        stats = Stats()
        start = time.perf_counter()
        program.run_text(_fast_math(settings) + "\n".join(enc.lines), "<terms>")
        stats.insert_seconds = time.perf_counter() - start
        if enc.roots:
            program.saturate(rulesets, settings.limits, stats)
        start = time.perf_counter()
        termdag, terms = program.extract([enc.names[r] for r in enc.roots])
        stats.extract_seconds = time.perf_counter() - start
        name = str(item.attributes.get("sym_name", item.name))
        _report(program, stats, settings, name, place, rulesets)
    if not enc.roots:
        return False
    return _rebuild_or_leave(item, enc, termdag, terms, settings, window, module)


def _rebuild_or_leave(item: Operation, enc: Encoder, termdag: Any, terms: list[int],
                      settings: Settings, window: Window | None, module: Module) -> bool:
    try:
        if window is None:
            return _rebuild(module, item, enc, termdag, terms)
        return _rebuild_window(window, enc, termdag, terms)
    except Fallback as reason:
        return _left_alone(settings, item, str(reason))
    except UnknownLeaf as e:
        raise _unknown_leaf(e, module, item, settings) from None


def _unknown_leaf(e: UnknownLeaf, module: Module, item: Operation,
                  settings: Settings) -> CompileError:
    """A rule built a Leaf the item does not have: located at that rule when a rule file
    writes the number (``(Leaf 999 t)``), else at the kernel."""
    name = item.attributes.get("sym_name", item.name)
    have = {0: "none", 1: "0"}.get(e.count, f"0 to {e.count - 1}")
    message = (f"{settings.pass_name}: the rules made (Leaf {e.index} ...), a value kernel "
               f"@{name} does not have (its leaves: {have}); a Leaf stands for a value "
               "of the kernel: rules may match Leaf terms, not make new ones")
    for path in settings.rule_files:
        found = find_leaf_literal(_read_rules(path), str(e.index))
        if found is not None:
            return CompileError(Diagnostic("error", message, str(path), *found,
                                           own_text=_read_rules(path)))
    filename = module.source.filename if module.source is not None else "<input>"
    line = item.source.line if item.source is not None else None
    column = item.source.column if item.source is not None else None
    return CompileError(Diagnostic("error", message, filename, line, column))


def _read_rules(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _left_alone(settings: Settings, item: Operation, reason: str) -> bool:
    """An item that cannot be rebuilt stays as it was (said under ``stats``)."""
    if settings.stats:
        settings.out.write(f"{settings.pass_name} @{item.attributes.get('sym_name')}: "
                           f"left as it was: {reason}\n")
    return False


def _rebuild(module: Module, item: Operation, enc: Encoder, termdag, terms) -> bool:
    """Install the item's rebuilt blocks (raises Fallback before changing anything)."""
    rebuilder = Rebuilder(enc, termdag, terms)
    blocks: list[Block] = [b for op in item.walk() for b in blocks_of(op)]
    new_ops = [(block, rebuilder.block(block)) for block in blocks]
    changed = _install(new_ops) or bool(rebuilder.mapping)
    replace_uses(module, rebuilder.mapping)
    _drop_unused_constants({id(v) for op in item.walk() for v in op.operands}, blocks)
    return changed


def _rebuild_window(window: Window, enc: Encoder, termdag, terms) -> bool:
    """Install a window's rebuilt run of ops and the blocks nested in it; the ops after
    it that read its values (found in ``enc.uses``) read the rebuilt ones."""
    rebuilder = Rebuilder(enc, termdag, terms)
    start, stop = window.span()
    run = window.block.ops[start:stop]
    nested: list[Block] = [b for op in run for inner in op.walk() for b in blocks_of(inner)]
    new_run = rebuilder.block(window.block, run)
    new_ops = [(block, rebuilder.block(block)) for block in nested]
    changed = bool(rebuilder.mapping) or [id(op) for op in new_run] != [id(op) for op in run]
    changed |= _install(new_ops)
    _replace_outside_uses(enc, rebuilder.mapping)
    used = {id(v) for op in new_run for inner in op.walk() for v in inner.operands}
    used |= {id(rebuilder.mapping.get(root, root))  # read by the ops after the window
             for root in enc.before.get(id(enc.end), ())}
    new_run = [op for op in new_run if _used(op, used)]
    window.block.ops[start:stop] = new_run
    for op in new_run:
        op.parent = window.block
    _drop_unused_constants(used, nested)
    return changed


def _install(new_ops: list[tuple[Block, list[Operation]]]) -> bool:
    """Give each block its new ops; True if any block's ops differ."""
    changed = False
    for block, ops in new_ops:
        if [id(op) for op in ops] != [id(op) for op in block.ops]:
            changed = True
        block.ops = ops
        for op in ops:
            op.parent = block
    return changed


def _replace_outside_uses(enc: Encoder, mapping: dict[Value, Value]) -> None:
    """The users of each replaced value read its replacement (the users inside the window
    were rebuilt reading it already)."""
    for old, new in mapping.items():
        for user in enc.uses.get(old, ()):
            user.operands = [new if v is old else v for v in user.operands]


def _drop_unused_constants(used: set[int], blocks: list[Block]) -> None:
    """Outer constants kept for inner blocks whose uses the rules removed (``used``: id()
    of every value some op reads)."""
    for block in blocks:
        block.ops = [op for op in block.ops if _used(op, used)]


def _used(op: Operation, used: set[int]) -> bool:
    return op.name != "constant" or any(id(r) in used for r in op.results)


def schedule(program: Program | Outline, settings: Settings) -> list[str]:
    """The rulesets to run: the analyses always, then the chosen (or all) others."""
    if settings.rulesets is None:
        return [r for r in program.rulesets if r not in settings.exclude]
    return [r for r in program.rulesets if r.endswith("-facts")] + settings.rulesets


def check_rulesets(program: Program | Outline, settings: Settings) -> None:
    for name in settings.rulesets or ():
        if name not in program.rulesets:
            raise CompileError(Diagnostic("error", f"{settings.pass_name}: no ruleset "
                                                   f"'{name}' (loaded: "
                                                   f"{', '.join(program.rulesets)})",
                                          "<command line>"))


def _fast_math(settings: Settings) -> str:
    return "(FastMath 1)\n" if settings.fast_math else ""


def _reports(settings: Settings) -> bool:
    """Whether ``_report`` writes anything (an e-graph without roots is still shown)."""
    return _shows_egraph(settings) or settings.stats


def _shows_egraph(settings: Settings) -> bool:
    """Whether the e-graph itself is shown (its program, drawing or rule matches): it is
    made even where no rule could match."""
    return bool(settings.dump_egglog or settings.dump_egraph or settings.rule_stats)


def _report(program: Program, stats: Stats, settings: Settings, item: str,
            place: tuple[int, int] | None = None, rulesets: list[str] = ()) -> None:
    tag = f"{settings.pass_name} @{item}" + (f" (window {place[0]}/{place[1]})" if place
                                              else "")
    if settings.dump_egglog:
        settings.out.write(f"; -----// egglog program of {tag} //----- //\n"
                           f"{program.program_text()}\n")
    if settings.dump_egraph:
        stem = f"{settings.pass_name}-{item}" + (f"-window{place[0]}" if place else "")
        _dump_egraph(program, settings.dump_egraph, stem, settings.out)
    if settings.stats:
        serialized = json.loads(program.egraph.serialize([]).to_json())
        stats.nodes = len(serialized["nodes"])
        stats.classes = len(serialized["class_data"])
        times = ", ".join(f"{name} {seconds:.4f}s"
                          for name, seconds in stats.ruleset_seconds.items())
        settings.out.write(
            f"{tag}: {stats.nodes} e-nodes, {stats.classes} e-classes, {stats.iterations} "
            f"iterations ({stats.stop_reason or 'nothing to do'}); insert "
            f"{stats.insert_seconds:.4f}s; {times or 'no rulesets'}; extract "
            f"{stats.extract_seconds:.4f}s\n")
    if settings.rule_stats:
        from .rule_stats import rule_table

        settings.out.write(rule_table(program, stats, list(rulesets), tag))


def _dump_egraph(program: Program, directory: str, stem: str, out: TextIO) -> None:
    """``stem``.json and .dot (and .svg when Graphviz's ``dot`` is installed)."""
    serialized = program.egraph.serialize([])
    base = os.path.join(directory, stem.replace("/", "_"))
    for suffix, text in ((".json", serialized.to_json()), (".dot", serialized.to_dot())):
        try:
            os.makedirs(directory, exist_ok=True)
            with open(base + suffix + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(base + suffix + ".tmp", base + suffix)
        except OSError as e:  # a user's folder: an error of the command line, located
            where = e.filename if isinstance(e.filename, str) else base + suffix
            raise CompileError(Diagnostic("error", f"--dump-egraph: cannot write '{where}': "
                                                   f"{e.strerror or e}", "<command line>")
                               ) from None
    import shutil  # (with subprocess) only for drawings: not on a compile's start-up
    import subprocess

    dot = shutil.which("dot")
    if dot is None:
        return  # said once per command (dot_missing_note)
    done = subprocess.run([dot, "-Tsvg", base + ".dot", "-o", base + ".svg"], check=False,
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"status {done.returncode}"])[0]
        out.write(f"--dump-egraph: dot (Graphviz) failed on {base}.dot: {reason}\n")


def dot_missing_note(folders: list[str]) -> str | None:
    """What to say, once per command, when e-graphs were written into ``folders`` but
    Graphviz's ``dot`` is not there to draw them as SVG."""
    import shutil

    wrote = any(name.endswith(".json") for folder in folders if os.path.isdir(folder)
                for name in os.listdir(folder))
    if not wrote or shutil.which("dot") is not None:
        return None
    return "--dump-egraph: dot (Graphviz) not found: wrote JSON and DOT only, no SVG\n"
