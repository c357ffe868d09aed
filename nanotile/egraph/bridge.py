"""IR <-> egglog terms.

``Encoder`` turns the pure dataflow of one item (an entry's body and every block nested
in it) into ``(let $vN (Ctor ...))`` lines. Anything that is not a term (block
arguments, loads, stores, loops, tokens...) is an anchor: its results enter the e-graph
as ``(Leaf id type)``, and the term values it uses become roots, to be rebuilt just
before it. A term value used from an inner block is a root of its own block (rebuilt
before the op holding the inner block) and a leaf inside.

``rebuild`` takes the extracted DAG (a TermDag, sharing preserved) and writes each block
again: anchors stay in order, each root's term is materialised once per block (memoised
by term id) right before the first anchor that needs it. Where a term node is an
original op of that block with its original operands, that op object is kept (its name
and location too), so unchanged code comes out unchanged. Equal constants are one term
wherever they are: one built in an outer block serves an inner block only where it was
placed before the op holding that block. If anything cannot be rebuilt (a type the
input never had, a leaf used before it is defined) ``Fallback`` leaves the item as it was.
A leaf the item does not have (a rule built ``(Leaf 999 t)``) is ``UnknownLeaf``: the
rules are wrong, an error for the user.

``Encoder.encode_window`` encodes only a run of a block's ops (a window of a large item):
the constants before it enter as terms that stay where they are, and its values used
after it are roots rebuilt at its end (``WindowEnd``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..ir.core import Block, Operation, Value, make_op
from ..ir.types import ElementType, TileType, Type
from .prefilter import TermName, literal_value
from .schema import egg_string, ops_by_ctor, term_ops

_PLAIN_FLOAT = re.compile(r"^-?\d+\.\d+$")


def is_term(op: Operation) -> bool:
    """Whether ``op`` becomes a term of the e-graph (the others are anchors)."""
    return (op.name == "constant" and len(op.results) == 1) or op.name in term_ops()


class Fallback(Exception):
    """The item cannot be rebuilt from the extracted terms; keep it as it was."""


class UnknownLeaf(Exception):
    """The extracted terms use ``(Leaf index ...)``, which the item does not have (only a
    rule can have made it)."""

    def __init__(self, index: Any, count: int) -> None:
        super().__init__(index, count)
        self.index, self.count = index, count


@dataclass
class Encoder:
    """The egglog lines for one item, and what is needed to rebuild it."""

    facts: dict[Value, list[Any]]
    uses: dict[Value, list[Operation]]
    lines: list[str] = field(default_factory=list)
    # $vN / $lN -> (constructor, arguments): the lines' terms, for prefilter
    terms: dict[str, tuple] = field(default_factory=dict)
    names: dict[Value, str] = field(default_factory=dict)      # term value -> $vN
    block_of: dict[Value, Block] = field(default_factory=dict)
    leaves: list[Value] = field(default_factory=list)
    leaf_names: dict[Value, str] = field(default_factory=dict)
    constx: list[Operation] = field(default_factory=list)
    types: dict[str, Type] = field(default_factory=dict)
    term_ops: set[int] = field(default_factory=set)            # id() of ops made terms
    # (id(block), term key) -> the first op of that block with that term
    originals: dict[tuple, Operation] = field(default_factory=dict)
    roots: list[Value] = field(default_factory=list)
    before: dict[int, list[Value]] = field(default_factory=dict)  # id(anchor) -> roots
    op_block: dict[int, Block] = field(default_factory=dict)   # id(op) -> its block
    position: dict[int, int] = field(default_factory=dict)     # id(op) -> index there
    holder: dict[int, Operation] = field(default_factory=dict)  # id(block) -> its op
    # constants outside the window its ops read: value -> name, and term key -> value
    outside: dict[Value, str] = field(default_factory=dict)
    outside_keys: dict[tuple, Value] = field(default_factory=dict)
    end: WindowEnd | None = None  # where a window's values used after it are rebuilt

    # -- encoding ----------------------------------------------------------------------

    def encode_block(self, block: Block, ops: list[Operation] | None = None,
                     start: int = 0) -> None:
        """Encode ``block``, or only ``ops``, a run of its ops from index ``start``."""
        for index, op in enumerate(block.ops if ops is None else ops, start):
            self.op_block[id(op)] = block
            self.position[id(op)] = index
            if is_term(op):
                self._encode_term(op, block)
                continue
            for v in op.operands:
                self._need(v, op)
            for region in op.regions:
                for inner in region.blocks:
                    self.holder[id(inner)] = op
                    self.encode_block(inner)

    def encode_window(self, block: Block, start: int, stop: int) -> None:
        """Encode the ops ``block.ops[start:stop]`` (and the blocks nested in them): a
        window. Its values used after it become roots rebuilt at its end; constants
        before it are terms the rules see, which stay where they are."""
        ops = block.ops[start:stop]
        self.encode_block(block, ops, start)
        self.end = WindowEnd(ops[-1])
        self.position[id(self.end)] = stop
        inside = {id(nested) for op in ops for nested in op.walk()}
        for value in self.names:
            if self.block_of[value] is block and any(id(user) not in inside
                                                     for user in self.uses.get(value, ())):
                self.before.setdefault(id(self.end), []).append(value)
                if value not in self.roots:
                    self.roots.append(value)

    def visible(self, home: Block, anchor: Operation, inner: Block) -> bool:
        """A value placed in ``home`` just before its op ``anchor`` is visible in
        ``inner``: ``inner`` is nested in an op of ``home`` at or after ``anchor``.
        (Being nested in ``home`` is not enough: a value placed before a later anchor
        would be used before it is defined.)"""
        holder: Operation | None = self.holder.get(id(inner))
        while holder is not None and self.op_block.get(id(holder)) is not home:
            block = self.op_block.get(id(holder))
            holder = self.holder.get(id(block)) if block is not None else None
        return holder is not None and self.position[id(holder)] >= self.position[id(anchor)]

    def defined_in(self, value: Value, block: Block) -> bool:
        owner = value.owner
        if isinstance(owner, Operation):
            return self.op_block.get(id(owner)) is block
        return owner is block

    def _encode_term(self, op: Operation, block: Block) -> None:
        result = op.results[0]
        ty = self.type_text(result.type)
        if op.name == "constant":
            ctor, args = self._constant(op, ty)
            words = [repr(args[0]), egg_string(ty)]
            key: tuple = (f"({ctor} {' '.join(words)})",)  # as Rebuilder._constant writes it
        else:
            schema = term_ops()[op.name]
            operands = [self._ref(v, op, block) for v in op.operands]
            attrs = schema.encode_attrs(op.attributes)
            ctor, words = schema.ctor, operands + attrs + [egg_string(ty)]
            args = (*map(TermName, operands), *map(literal_value, attrs), ty)
            key = (schema.ctor, tuple(attrs), ty, tuple(id(v) for v in op.operands))
        name = f"$v{len(self.names)}"
        self.lines.append(f"(let {name} ({ctor} {' '.join(words)}))")
        self.terms[name] = (ctor, args)
        self.names[result] = name
        self.block_of[result] = block
        self.term_ops.add(id(op))
        self.originals.setdefault((id(block), *key), op)
        if len(self.uses.get(result, ())) == 1:
            self.lines.append(f"(SingleUse {name})")
        self._facts(result, name)

    def _constant(self, op: Operation, ty: str) -> tuple[str, tuple]:
        """(constructor, (value, type)) of a constant's term."""
        from ..ir.rewrite import splat_number

        value = splat_number(op.results[0])
        element = op.results[0].type.element
        if value is not None and element.is_int:
            return "ConstI", (int(value), ty)
        # -0.0 stays opaque: egglog's f64 equality does not tell it from +0.0
        if value is not None and _PLAIN_FLOAT.match(repr(float(value))) \
                and float(value) == value and repr(float(value)) != "-0.0":
            return "ConstF", (float(value), ty)
        self.constx.append(op)
        return "ConstX", (len(self.constx) - 1, ty)

    def _ref(self, v: Value, user: Operation, block: Block) -> str:
        """The name of ``v`` as an operand of a term op in ``block``."""
        if v in self.names and self.block_of[v] is block:
            return self.names[v]
        self._need(v, user)
        if v in self.names and v.owner.name == "constant":
            return self.names[v]  # rules see the value; rebuilt as the outer constant
        if isinstance(v.owner, Operation) and v.owner.name == "constant" and is_term(v.owner):
            return self._outside_constant(v)
        return self._leaf(v)

    def _outside_constant(self, v: Value) -> str:
        """A constant before the window (only a window's ops read one not encoded yet):
        the rules see its value; it stays where it is and serves every equal term."""
        if v not in self.outside:
            ty = self.type_text(v.type)
            ctor, args = self._constant(v.owner, ty)
            text = f"({ctor} {args[0]!r} {egg_string(ty)})"
            name = f"$c{len(self.outside)}"
            self.lines.append(f"(let {name} {text})")
            self.terms[name] = (ctor, args)
            self.outside[v] = name
            self.outside_keys.setdefault((text,), v)
            self._facts(v, name)
        return self.outside[v]

    def _need(self, v: Value, user: Operation) -> None:
        """``user`` (an anchor, or an op in an inner block) uses ``v``: if ``v`` is a term,
        it becomes a root, rebuilt before ``user``'s ancestor in ``v``'s block."""
        if v not in self.names:
            return
        home = self.block_of[v]
        anchor: Operation | None = user
        while anchor is not None and self.op_block.get(id(anchor)) is not home:
            block = self.op_block.get(id(anchor))
            anchor = self.holder.get(id(block)) if block is not None else None
        if anchor is None:
            raise Fallback(f"a use of {v!r} is not inside the block defining it")
        roots = self.before.setdefault(id(anchor), [])
        if v not in roots:
            roots.append(v)
        if v not in self.roots:
            self.roots.append(v)

    def _leaf(self, v: Value) -> str:
        if v not in self.leaf_names:
            name = f"$l{len(self.leaves)}"
            ty = self.type_text(v.type)
            self.lines.append(f"(let {name} (Leaf {len(self.leaves)} {egg_string(ty)}))")
            self.terms[name] = ("Leaf", (len(self.leaves), ty))
            self.leaves.append(v)
            self.leaf_names[v] = name
            self._facts(v, name)
        return self.leaf_names[v]

    def _facts(self, v: Value, name: str) -> None:
        for fact in self.facts.get(v, ()):
            kind = type(fact).__name__
            if kind == "DivByAttr" and fact.every is None:
                self.lines.append(f"(DivBy {name} {int(fact.divisor)})")
            elif kind == "BoundedAttr":
                if fact.lower is not None:
                    self.lines.append(f"(Lower {name} {int(fact.lower)})")
                if fact.upper is not None:
                    self.lines.append(f"(Upper {name} {int(fact.upper)})")

    def type_text(self, t: Type) -> str:
        text = str(t)
        if text not in self.types:
            self.types[text] = t
            element = t.element if isinstance(t, TileType) else t
            quoted = egg_string(text)
            self.lines.append(f"(set (Elem {quoted}) {egg_string(str(element))})")
            if isinstance(t, TileType):
                self.lines.append(f"(set (Rank {quoted}) {t.rank})")
            if isinstance(element, ElementType):
                self.lines.append(f"(set (Width {quoted}) {element.bitwidth})")
        return text


class WindowEnd:
    """The place just after a window's last op: an anchor that the window's values used
    after the window are rebuilt before (where the ops after the window see them)."""

    def __init__(self, last: Operation) -> None:
        self.source, self.location = last.source, last.location


# --------------------------------------------------------------------------------------
# Rebuilding


def _lit(termdag: Any, term: int) -> Any:
    return termdag.get(term).value.value


def _lit_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return egg_string(value)
    return str(value)


class Rebuilder:
    """Writes the blocks of one item again from the extracted terms."""

    def __init__(self, enc: Encoder, termdag: Any, root_terms: list[int]) -> None:
        self.enc = enc
        self.termdag = termdag
        self.term_of = dict(zip(enc.roots, root_terms))
        self.mapping: dict[Value, Value] = {}
        self.used: set[int] = set()  # id() of original ops placed again
        self.created: set[int] = set()  # id() of ops made from terms
        # term key -> (block, the anchor it was placed before, value), for each placement;
        # block None: a constant before the window, seen everywhere in it
        self.constants: dict[tuple, list[tuple[Block | None, Any, Value]]] = {
            key: [(None, None, value)] for key, value in enc.outside_keys.items()}

    def block(self, block: Block, run: list[Operation] | None = None) -> list[Operation]:
        """The new op list of ``block`` (not installed yet), or of the window ``run`` of
        its ops, ending with the window's values used after it."""
        memo: dict[int, tuple[Value, Value | None]] = {}
        ops: list[Operation] = []
        available: set[Value] = set(block.arguments)
        for op in block.ops if run is None else run:
            if id(op) in self.enc.term_ops:
                continue
            self._roots_before(op, block, memo, ops, available)
            ops.append(op)
            available.update(op.results)
        if run is not None and self.enc.end is not None:
            self._roots_before(self.enc.end, block, memo, ops, available)
        return ops

    def _roots_before(self, anchor: Any, block: Block, memo: dict, ops: list[Operation],
                      available: set[Value]) -> None:
        for root in self.enc.before.get(id(anchor), ()):
            value = self._materialize(self.term_of[root], block, anchor, memo, ops, available)
            if value is not root:
                self.mapping[root] = value
                if value.name_hint is None and id(value.owner) in self.created:
                    value.name_hint = root.name_hint  # the new op keeps the name

    def _materialize(self, term: int, block: Block, anchor: Operation,
                     memo: dict[int, tuple[Value, Value | None]], ops: list[Operation],
                     available: set[Value]) -> Value:
        stack = [term]
        while stack:
            current = stack[-1]
            if current in memo:
                stack.pop()
                continue
            node = self.termdag.get(current)
            arity = self._arity(node.name)
            missing = [c for c in node.args[:arity] if c not in memo]
            if missing:
                stack.extend(reversed(missing))  # first operand first: source order
                continue
            stack.pop()
            memo[current] = self._node(node, arity, block, anchor, memo, ops, available)
        return memo[term][0]

    def _arity(self, name: str) -> int:
        schema = ops_by_ctor().get(name)
        return schema.arity if schema is not None else 0

    def _node(self, node: Any, arity: int, block: Block, anchor: Operation,
              memo: dict, ops: list[Operation], available: set[Value]
              ) -> tuple[Value, Value | None]:
        """(new value, the original value it is, or None) for one term node."""
        name = node.name
        args = node.args
        if name == "Leaf":
            index = _lit(self.termdag, args[0])
            if not (isinstance(index, int) and 0 <= index < len(self.enc.leaves)):
                raise UnknownLeaf(index, len(self.enc.leaves))
            value = self.enc.leaves[index]
            if self.enc.defined_in(value, block) and value not in available:
                raise Fallback(f"{value!r} would be used before it is defined")
            return value, value
        ty_text = _lit(self.termdag, args[-1])
        if ty_text not in self.enc.types:
            raise Fallback(f"the rules made a value of type {ty_text} the input never had")
        ty = self.enc.types[ty_text]
        if name in ("ConstI", "ConstF", "ConstX"):
            raw = _lit(self.termdag, args[0])
            return self._constant(name, raw, ty, ty_text, block, anchor, ops)
        schema = ops_by_ctor().get(name)
        if schema is None:
            raise Fallback(f"no op for the term constructor {name}")
        children = [memo[c] for c in args[:arity]]
        literals = [_lit(self.termdag, a) for a in args[arity:-1]]
        key = (name, tuple(_lit_text(v) for v in literals), ty_text,
               tuple(id(orig) if orig is not None else -1 for _, orig in children))
        original = self.enc.originals.get((id(block), *key))
        operands = [value for value, _ in children]
        if original is not None and id(original) not in self.used:
            self.used.add(id(original))
            original.operands = operands
            ops.append(original)
            return original.results[0], original.results[0]
        op = make_op(schema.op.name, operands, [ty], schema.decode_attrs(literals))
        return self._place(op, anchor, ops), None

    def _constant(self, name: str, raw: Any, ty: Type, ty_text: str, block: Block,
                  anchor: Operation, ops: list[Operation]) -> tuple[Value, Value | None]:
        from ..ir.rewrite import make_splat

        if name == "ConstX":
            source = self.enc.constx[raw]
            key: tuple = (f"(ConstX {raw} {egg_string(ty_text)})",)
        else:
            source = None
            key = (f"({name} {raw!r} {egg_string(ty_text)})",)
        original = self.enc.originals.get((id(block), *key)) or source
        if original is not None and self.enc.op_block.get(id(original)) is block \
                and id(original) not in self.used and original.results[0].type == ty:
            self.used.add(id(original))
            ops.append(original)
            self.constants.setdefault(key, []).append((block, anchor, original.results[0]))
            return original.results[0], original.results[0]
        for home, placed_before, value in self.constants.get(key, ()):
            if home is None or home is block or self.enc.visible(home, placed_before, block):
                return value, value
        if source is not None:
            op = make_op("constant", [], [ty], dict(source.attributes))
        else:
            op = make_splat(raw, ty)
        value = self._place(op, anchor, ops)
        self.constants.setdefault(key, []).append((block, anchor, value))
        return value, None

    def _place(self, op: Operation, anchor: Operation, ops: list[Operation]) -> Value:
        op.source, op.location = anchor.source, anchor.location
        self.created.add(id(op))
        ops.append(op)
        return op.results[0]
