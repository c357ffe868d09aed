"""The top level of a Tile IR text file: modules, bare items and ``#alias = ...`` lines.

  cuda_tile.module @m { items }         cuda-tile's form (possibly inside `module { }`)
  entry @k(...) {...}  global ...       tileirdisasm's form: items at top level
  "cuda_tile.module"() <{...}> ({...})  the generic form
  #loc3 = loc("f.py":3:4)               aliases, usable before their definition
"""

from __future__ import annotations

import re
from typing import Any

from . import types as T
from .asm_format import compile_format, parse_format
from .core import Module, Operation
from .optable import TESTING_FUNC, lookup
from .parser import OpParser, OpState

ITEM_NAMES = ("entry", "global", "testing$func")


# `#name` after a line start, a space or a closing bracket: where definitions can stand
# (uses inside `loc(...)`, `%x#1` and the like do not match, so most kernels skip the scan).
_MAYBE_ALIAS = re.compile(r"(?:^|[\s}\])])#[\w$.]", re.MULTILINE)


def _prescan_aliases(p: OpParser) -> None:
    """Note where each top-level ``#name = value`` is, so uses may come first."""
    if not _MAYBE_ALIAS.search(p.smap.text):  # no `#name` that could start a definition
        return
    depth = 0
    toks = p.toks
    for i, t in enumerate(toks):
        if t.kind == "p":
            if t.text in ("{", "(", "["):
                depth += 1
            elif t.text in ("}", ")", "]"):
                depth -= 1
        elif (t.kind == "h" and depth == 0 and "<" not in t.text and i + 1 < len(toks)
              and toks[i + 1].text == "=" and toks[i + 1].kind == "p"):
            if t.text in p.alias_tokens:
                raise p.error(f"redefinition of attribute alias id '{t.text[1:]}'", t)
            p.alias_tokens[t.text] = (i + 2, 0)
            p.alias_order.append(t.text)


def parse_top(p: OpParser) -> list[Module]:
    _prescan_aliases(p)
    modules: list[Module] = []
    bare: Module | None = None
    while p.peek().kind != "$":
        t = p.peek()
        if _skip_alias(p):
            continue
        if t.kind == "w" and t.text in ("module", "builtin.module"):
            modules.extend(_parse_builtin_module(p))
            continue
        if t.kind == "w" and t.text == "cuda_tile.module":
            modules.append(_parse_module(p))
            continue
        if t.kind == "q" and p.string_value(t) in ("builtin.module", "cuda_tile.module"):
            modules.extend(_from_generic(p.parse_op(), p))
            continue
        if bare is None:
            bare = Module(None)
            modules.append(bare)
        item = parse_item(p)
        bare.items.append(item)
    _attach_aliases(p, modules)
    return modules


def _skip_alias(p: OpParser) -> bool:
    t = p.peek()
    if not (t.kind == "h" and t.text in p.alias_tokens and p.peek(1).text == "="):
        return False
    p.resolve_alias(t)
    p.next()
    p.next()
    p.parse_alias_value()
    return True


def _attach_aliases(p: OpParser, modules: list[Module]) -> None:
    """Resolve every alias, used or not, so a bad definition is reported. The printer
    makes its own alias names (as MLIR does), so the table is not kept."""
    for name in p.alias_order:
        p.resolve_alias(_tok(p, name))


def _tok(p: OpParser, name: str) -> Any:
    from .asm_lexer import Token

    i = p.alias_tokens[name][0] - 2
    return Token("h", name, p.toks[i].offset)


def _parse_builtin_module(p: OpParser) -> list[Module]:
    p.next()
    if p.peek().kind == "s":
        p.next()
    if p.accept("attributes"):
        p.parse_extra_attr_dict(None)
    p.expect("{")
    out: list[Module] = []
    bare: Module | None = None
    while not p.at("}"):
        t = p.peek()
        if t.kind == "$":
            raise p.error("expected '}' to close the module", t)
        if t.kind == "w" and t.text == "cuda_tile.module":
            out.append(_parse_module(p))
        elif t.kind == "q" and p.string_value(t) == "cuda_tile.module":
            out.extend(_from_generic(p.parse_op(), p))
        else:
            if bare is None:
                bare = Module(None)
                out.append(bare)
            bare.items.append(parse_item(p))
    p.expect("}")
    p.maybe_location()
    return out


def _parse_module(p: OpParser) -> Module:
    start = p.next()
    name = p.next()
    if name.kind != "s":
        raise p.error(f"expected module name (@name), found {p.describe(name)}", name)
    m = Module(p.symbol_value(name))
    from .attrs import SourceRange

    m.source = SourceRange(p.filename, *p.smap.line_col(start.offset))
    if p.accept("attributes"):
        attrs = p.parse_extra_attr_dict(lookup("module"))
        producer = attrs.pop("producer", None)
        if producer is not None:
            m.producer = getattr(producer, "value", producer)
        m.attributes.update(attrs)
    p.expect("{")
    saved = p.scopes
    p.scopes = [{}]
    while not p.at("}"):
        if p.peek().kind == "$":
            raise p.error("expected '}' to close the module", p.peek())
        if _skip_alias(p):
            continue
        m.items.append(parse_item(p))
    p.scopes = saved
    p.expect("}")
    loc = p.maybe_location()
    if loc is not None:
        m.location = loc
    return m


def parse_item(p: OpParser) -> Operation:
    """An ``entry``, ``global`` or ``testing$func`` (custom or generic form)."""
    t = p.peek()
    if t.kind == "q":
        op = p.parse_op()
        if op.name == "cuda_tile.testing$func":
            op.name = "testing$func"
        return op
    name = t.text.removeprefix("cuda_tile.")
    if t.kind == "v" or (t.kind == "w" and lookup(name) is not None
                         and name not in ITEM_NAMES):
        # MLIR's implicit module holds any op; where an op may stand is the verifier's call
        return p.parse_op()
    if t.kind != "w" or name not in ITEM_NAMES:
        if t.kind == "w":
            raise p.error(f"custom op '{t.text}' is unknown", t)
        raise p.error(f"expected a module item (entry, global), found {p.describe(t)}", t)
    if name == "testing$func":
        p.next()
        st = OpState(TESTING_FUNC, None, t)
        st.extra["owner"] = "testing$func"
        parse_format(p, st, compile_format("!entry"))
        op = Operation("testing$func", attributes=st.attrs, regions=st.regions)
        for r in op.regions:
            r.parent = op
        from .attrs import SourceRange

        op.source = SourceRange(p.filename, *p.smap.line_col(t.offset))
        loc = p.maybe_location()
        if loc is not None:
            op.location = loc
        return op
    return p.parse_op()


def _from_generic(op: Operation, p: OpParser) -> list[Module]:
    """Turn a generic ``builtin.module`` / ``cuda_tile.module`` op into Modules."""
    if op.name == "builtin.module":
        out: list[Module] = []
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    out.extend(_from_generic(inner, p))
        return out
    if op.name != "module":
        m = Module(None)
        m.items.append(op)
        return [m]
    m = Module(op.attributes.get("sym_name"))
    producer = op.attributes.get("producer")
    if producer is not None:
        m.producer = producer
    for region in op.regions:
        for block in region.blocks:
            for item in block.ops:
                if item.name == "cuda_tile.testing$func":
                    item.name = "testing$func"
                item.parent = None
                m.items.append(item)
    m.location = op.location
    return [m]


def function_type_of(op: Operation) -> T.FunctionType | None:
    return op.attributes.get("function_type")
