"""How the verifier walks a module and turns broken rules into diagnostics.

A rule is a function ``rule(op) -> None`` that raises ``RuleError`` when the op breaks
it. Rules are registered per op name with ``@rule("addf", "subf")`` in the family
modules; ``verify`` runs, for each op, the op table's generic checks (operand/result
type constraints, in ``constraints``) and then its registered rules, in registration
order. Like MLIR, the first broken rule of an op is reported and the walk of that
top-level item (entry, global) stops there; other items are still checked (MLIR
verifies isolated-from-above ops independently). Rules registered with ``on_exit=True``
run after the op's regions were checked (MLIR's ``verifyRegions``).

Messages follow MLIR: an op error reads ``'cuda_tile.addf' op <text>``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

from nanotile.diagnostics import Diagnostic
from nanotile.ir.core import Block, Module, Operation, Value
from nanotile.ir.optable import operand_group as group  # the rule modules call it so
from nanotile.ir.types import Type

Rule = Callable[[Operation], None]


@dataclass
class Options:
    """Switches of one verification run (nanotile-opt's -Wunsupported-hints, -Werr-hints)."""

    hint_warnings: bool = False
    hint_errors: bool = False


@dataclass
class _Run:
    options: Options
    filename: str
    module: Module | None = None
    warnings: list[Diagnostic] = field(default_factory=list)
    # id(op) -> (enclosing op or None for a top-level item, the block holding it)
    parents: dict[int, tuple[Operation | None, Block | None]] = field(default_factory=dict)


# The run in progress (rules report warnings here; parents and options live here).
# A context variable, so that nested or concurrent verifications do not mix.
_RUN: ContextVar[_Run | None] = ContextVar("nanotile_verify_run", default=None)


def current_options() -> Options:
    run = _RUN.get()
    return run.options if run else Options()


def parent_op(op: Operation) -> Operation | None:
    """The op whose region holds ``op`` (None at the top level).

    Taken from the walk, not from the ``parent`` links, which builders may leave unset.
    """
    run = _RUN.get()
    if run and id(op) in run.parents:
        return run.parents[id(op)][0]
    block = op.parent
    region = block.parent if block is not None else None
    return region.parent if region is not None else None


def parent_block(op: Operation) -> Block | None:
    run = _RUN.get()
    if run and id(op) in run.parents:
        return run.parents[id(op)][1]
    return op.parent


def _record_parents(run: _Run, module: Module) -> None:
    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    run.parents[id(inner)] = (op, block)
                    visit(inner)
    for item in module.items:
        run.parents[id(item)] = (None, None)
        visit(item)


def current_module() -> Module | None:
    """The module being verified (for symbol lookups)."""
    run = _RUN.get()
    return run.module if run else None


def warn(message: str, op: Operation) -> None:
    """A warning at ``op`` that does not fail verification."""
    run = _RUN.get()
    if run is None:
        return
    fname, line, col = position(op, run.filename)
    run.warnings.append(Diagnostic("warning", message, fname, line, col))

def error_and_go_on(message: str, op: Operation) -> None:
    """An op error that does not fail the op's verification (cuda-tile emits a few with
    the verifier going on to success): checking carries on after it."""
    run = _RUN.get()
    if run is None:
        return
    fname, line, col = position(op, run.filename)
    run.warnings.append(Diagnostic("error", f"{op_label(op)} {message}", fname, line, col))

_RULES: dict[str, list[Rule]] = {}
_EXIT_RULES: dict[str, list[Rule]] = {}


@dataclass
class Note:
    message: str
    op: Operation | None = None  # where the note points (None: the failing op)


@dataclass
class RuleError(Exception):
    """A broken rule. ``op_prefix``: start the message with ``'cuda_tile.X' op``."""

    message: str
    op_prefix: bool = True
    at: Operation | None = None  # report at another op than the one checked
    notes: list[Note] = field(default_factory=list)
    severity: str = "error"
    then: list[str] = field(default_factory=list)  # errors MLIR emits after it, same op


def fail(message: str, *, op_prefix: bool = True, at: Operation | None = None,
         notes: list[Note] | None = None, then: list[str] | None = None) -> RuleError:
    """``raise fail("...")`` from a rule."""
    return RuleError(message, op_prefix, at, notes or [], then=then or [])


def rule(*names: str, on_exit: bool = False) -> Callable[[Rule], Rule]:
    """Register a rule for the named ops."""
    table = _EXIT_RULES if on_exit else _RULES

    def register(fn: Rule) -> Rule:
        for name in names:
            table.setdefault(name, []).append(fn)
        return fn
    return register


def mlir_type(t: Type | None) -> str:
    """A type the way MLIR prints it in a diagnostic: ``'!cuda_tile.tile<4xf32>'``."""
    from nanotile.ir.types import ElementType
    if t is None:
        return "<none>"
    if isinstance(t, ElementType):
        return str(t)
    text = str(t)
    if text.startswith(("!", "(")):
        return text
    return "!cuda_tile." + text


def q(t: Type | None) -> str:
    """A type streamed into a diagnostic: quoted, as MLIR does."""
    return f"'{mlir_type(t)}'"


def shape_text(shape) -> str:
    """A shape streamed into a diagnostic: ``2, 4``."""
    return ", ".join(str(d) for d in shape)


def op_label(op: Operation) -> str:
    """``'cuda_tile.addf' op``, with the op's name as written (the parser records an
    alias such as ``pow`` for ``fpowf`` in ``source.extra["spelling"]``)."""
    name = op.source.extra.get("spelling", op.name) if op.source is not None else op.name
    name = name.removeprefix("cuda_tile.")
    return f"'cuda_tile.{name}' op"


def position(op: Operation | None, filename: str) -> tuple[str, int | None, int | None]:
    """File, line and column of an op: its text position, else its loc(...), else (for
    ops the parser adds, such as an implicit terminator) the position of its parent."""
    seen = 0
    while op is not None and seen < 64:
        if op.source is not None:
            return op.source.filename, op.source.line, op.source.column
        loc = op.location
        for _ in range(16):  # unwrap name/call-site/fused locations
            if loc is None:
                break
            if all(hasattr(loc, a) for a in ("filename", "line", "column")):
                return loc.filename, loc.line, loc.column
            loc = (getattr(loc, "child", None) or getattr(loc, "callee", None)
                   or next(iter(getattr(loc, "locations", ()) or ()), None))
        op, seen = parent_op(op), seen + 1
    return filename, None, None


def to_diagnostics(err: RuleError, op: Operation, filename: str) -> list[Diagnostic]:
    target = err.at or op
    fname, line, col = position(target, filename)
    out = []
    for message in (err.message, *err.then):
        text = f"{op_label(target)} {message}" if err.op_prefix else message
        out.append(Diagnostic(err.severity, text, fname, line, col))
    for note in err.notes:
        nf, nl, nc = position(note.op or target, filename)
        out[0].notes.append(Diagnostic("note", note.message, nf, nl, nc))
    return out


def _check_op(op: Operation) -> None:
    """The op's own invariants: type constraints, then its rules."""
    from .constraints import check_constraints
    from .structure import check_types_of
    check_types_of(op)
    check_constraints(op)
    _check_blocks_not_empty(op)
    for fn in _RULES.get(op.name, ()):
        fn(op)


def _check_blocks_not_empty(op: Operation) -> None:
    """MLIR's SingleBlock trait: every op with a region here has one block, and that
    block holds at least its terminator (the bytecode reader checks nested blocks as it
    reads them, not the body of an entry)."""
    for region in op.regions:
        if region.blocks and not region.blocks[0].ops:
            raise fail("expects a non-empty block")


def _check_block_ends_in_terminator(block: Block) -> None:
    """MLIR checks this on leaving a block, after its ops and before its op's own region
    checks: the message shows the last op in generic form, on its own line when it spans
    several."""
    from nanotile.ir.optable import lookup
    last = block.ops[-1]
    opdef = lookup(last.name)
    if opdef is not None and opdef.is_terminator:
        return
    text = _generic_text(last)
    raise fail("block with no terminator, has " + ("\n" if "\n" in text else "") + text,
               op_prefix=False, at=last)


def _generic_text(op: Operation) -> str:
    """``op`` in generic form, its values numbered as in its whole top-level item."""
    from nanotile.ir.printer import OpPrinter
    item = op
    while parent_op(item) is not None:
        item = parent_op(item)
    printer = OpPrinter(generic=True)
    printer.number(item)
    return printer.op(op)


def _walk(op: Operation) -> None:
    """Check ``op`` and everything nested in it; raise at the first broken rule."""
    try:
        _check_op(op)
    except RuleError as err:
        err.at = err.at or op
        raise
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                _walk(inner)
            if block.ops:
                _check_block_ends_in_terminator(block)
    for fn in _EXIT_RULES.get(op.name, ()):
        try:
            fn(op)
        except RuleError as err:
            err.at = err.at or op
            raise


def _module_filename(module: Module) -> str:
    if module.source is not None:
        return module.source.filename
    for op in module.walk():
        if op.source is not None:
            return op.source.filename
    return module.filename or "<unknown>"


def verify(module: Module, options: Options | None = None) -> list[Diagnostic]:
    """Every item's first broken rule, then module-wide checks (dominance, symbols).

    Warnings come first, in the order they were found, then errors.
    """
    filename = _module_filename(module)
    run = _Run(options or Options(), filename, module)
    _record_parents(run, module)
    token = _RUN.set(run)
    try:
        errors = _verify(module, filename)
        return run.warnings + errors
    finally:
        _RUN.reset(token)


def _verify(module: Module, filename: str) -> list[Diagnostic]:
    from . import load_families
    load_families()
    from .dominance import check_dominance
    from .structure import check_module_items

    diags: list[Diagnostic] = []
    try:
        check_module_items(module)
    except RuleError as err:
        assert err.at is not None
        return to_diagnostics(err, err.at, filename)
    for item in module.items:
        try:
            _walk(item)
        except RuleError as err:
            assert err.at is not None
            diags += to_diagnostics(err, err.at, filename)
            if item.name not in ("entry", "testing$func"):
                break  # not isolated from above: MLIR stops here
    if diags:
        return diags
    try:
        check_dominance(module)
    except RuleError as err:
        assert err.at is not None
        diags += to_diagnostics(err, err.at, filename)
    return diags


# ---------------------------------------------------------------------------------
# Small helpers shared by the rule modules


def one(op: Operation, name: str) -> Value | None:
    vals = group(op, name)
    return vals[0] if vals else None


def result_named(op: Operation, name: str) -> Value | None:
    from nanotile.ir.optable import lookup
    d = lookup(op.name)
    if d is None:
        return None
    for i, rd in enumerate(d.results):
        if rd.name == name and i < len(op.results):
            return op.results[i]
    return None


def attr(op: Operation, name: str):
    """An attribute's value, or the op table's default when it is absent."""
    from nanotile.ir.optable import lookup
    if name in op.attributes:
        return op.attributes[name]
    d = lookup(op.name)
    a = d.attr(name) if d else None
    return a.default if a else None
