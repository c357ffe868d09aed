"""The egglog schema: the fixed sorts of ``schema.egg`` plus one constructor per pure op,
generated from ``optable.OPS`` so that a new op needs no edit here.

An op gets a constructor when it is pure, has no regions, one result, only single
operands and attributes of the kinds below; everything else stays an anchor (a leaf in
the e-graph). Constructor names are the op names in CamelCase (``mmaf_scaled`` ->
``MmafScaled``); arguments are the operands, the attributes (op-table order), the type.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..ir.optable import OPS, AttrDef, OpDef
from .cost import CostModel

SCHEMA_FILE = Path(__file__).with_name("schema.egg")
RULES_DIR = Path(__file__).with_name("rules")

# attribute kind -> egglog sort
_ATTR_SORTS = {"enum": "String", "unit": "bool", "bool": "bool", "int": "i64",
               "i32_array": "String"}
# pure ops that stay anchors: constants have their own constructors; the others carry
# views, tokens or symbols the rules have no business with.
_NOT_TERMS = {"constant", "assume", "make_token", "join_tokens", "get_global"}


@dataclass(frozen=True)
class OpSchema:
    """How one op is written as a term."""

    op: OpDef
    ctor: str

    @property
    def arity(self) -> int:
        return len(self.op.operands)

    def encode_attrs(self, attributes: dict[str, Any]) -> list[str]:
        return [_encode_attr(a, attributes.get(a.name)) for a in self.op.attrs]

    def decode_attrs(self, literals: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for definition, value in zip(self.op.attrs, literals):
            decoded = _decode_attr(definition, value)
            if decoded is not None and decoded != definition.default:
                out[definition.name] = decoded
        return out


def ctor_name(op_name: str) -> str:
    return "".join(part.capitalize() for part in op_name.split("_"))


def _is_term_op(op: OpDef) -> bool:
    return (op.is_pure and op.regions == 0 and len(op.results) == 1
            and not op.results[0].variadic and op.name not in _NOT_TERMS
            and "view" not in op.traits
            and all(o.kind == "single" for o in op.operands)
            and all(a.kind in _ATTR_SORTS for a in op.attrs))


@cache
def term_ops() -> dict[str, OpSchema]:
    """op name -> its schema, for every op that becomes a term."""
    return {name: OpSchema(op, ctor_name(name)) for name, op in OPS.items() if _is_term_op(op)}


@cache
def ops_by_ctor() -> dict[str, OpSchema]:
    return {s.ctor: s for s in term_ops().values()}


def constructors(cost: CostModel) -> str:
    """The generated ``(constructor ...)`` lines, with each op's cost."""
    lines = ["; --- one constructor per pure op (generated from the op table) ---"]
    for name, s in term_ops().items():
        sorts = ["Term"] * s.arity + [_ATTR_SORTS[a.kind] for a in s.op.attrs] + ["String"]
        lines.append(f"(constructor {s.ctor} ({' '.join(sorts)}) Term "
                     f":cost {cost.op_cost(name)})")
    return "\n".join(lines) + "\n"


def type_facts() -> str:
    """The ``type-facts`` analysis: (TypeOf e) for every term (its last argument)."""
    lines = ["; --- type-facts: every constructor's last argument is its type ---",
             "(ruleset type-facts)"]
    fixed = {"Leaf": 1, "ConstI": 1, "ConstF": 1, "ConstX": 1}
    arities = fixed | {s.ctor: s.arity + len(s.op.attrs) for s in term_ops().values()}
    for ctor, count in arities.items():
        args = " ".join(f"a{i}" for i in range(count))
        lines.append(f"(rule ((= e ({ctor} {args} t))) ((set (TypeOf e) t)) "
                     f":ruleset type-facts)")
    return "\n".join(lines) + "\n"


def schema_text(cost: CostModel) -> str:
    return (SCHEMA_FILE.read_text(encoding="utf-8") + "\n" + constructors(cost)
            + type_facts())


def egg_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _encode_attr(definition: AttrDef, value: Any) -> str:
    if value is None:
        value = definition.default
    kind = definition.kind
    if kind == "enum":
        return egg_string(value.name if value is not None else "")
    if kind in ("unit", "bool"):
        return "true" if value else "false"
    if kind == "int":
        return str(int(value or 0))
    return egg_string(",".join(str(int(v)) for v in value or ()))  # i32_array


def _decode_attr(definition: AttrDef, value: Any) -> Any:
    kind = definition.kind
    if kind == "enum":
        return definition.enum[value] if value and definition.enum else None
    if kind == "unit":
        return True if value else None
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return int(value)
    return tuple(int(v) for v in value.split(",")) if value else ()
