"""THE op table: the one place where every op of Tile IR bytecode 13.4 is described.

Each row says, for one op: its mnemonic and bytecode opcode, the version that introduced
it, its operand groups, results, attributes and number of regions, and how it is encoded
(which optional parts the flags varint announces, whether the result types are
counted). The parser, printer, bytecode reader/writer, verifier and interpreter all read
these rows; nothing else lists ops.

Facts come from ../shared/reference/wire-format.md section 12 (cuTile 1.7.0's encoder,
checked against tileirdisasm/tileiras 13.4.92) and the op definitions of NVIDIA's
cuda-tile (names of operands and attributes, defaults).

Notation used by the rows below:

- operands: ``"lhs rhs"`` = one value each; ``"mask?"`` = optional; ``"indices*"`` =
  variadic (any number). Group order is the order in the IR and in bytecode.
- results: same notation; ``"results*"`` = variadic.
- attributes: built with the small helpers ``enum``, ``unit``, ``integer``... below, listed
  in bytecode order. ``since`` on an operand/attribute/flag = the version that added it.
- ``flags``: the names announced by the op's flags varint, bit 0 first. A unit attribute
  named there is encoded only as its bit; an optional operand or attribute named there
  is written only when its bit is set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .enums import (
    AtomicRMWMode,
    ComparisonOrdering,
    ComparisonPredicate,
    IntegerOverflow,
    MemoryOrderingSemantics,
    MemoryScope,
    RoundingMode,
    Signedness,
    SymbolVisibility,
)

# --------------------------------------------------------------------------------------
# Row structure


@dataclass(frozen=True, slots=True)
class OperandDef:
    name: str
    kind: str = "single"  # "single" | "optional" | "variadic"
    since: str = "13.1"


@dataclass(frozen=True, slots=True)
class ResultDef:
    name: str
    variadic: bool = False
    since: str = "13.1"


@dataclass(frozen=True, slots=True)
class AttrDef:
    """One attribute of an op.

    kind (how the value is held in ``Operation.attributes`` / how bytecode encodes it):
      enum        an ``enums`` member             (1 raw byte)
      unit        True when present               (a flags bit only)
      bool        bool                            (1 raw byte)
      int         int                             (varint)
      string      str                             (string id)
      symbol      str, a symbol name without @    (string id)
      type        a Type                          (type id)
      dense       attrs.DenseElementsAttr         (constant id)
      i32_array   tuple[int, ...]                 (int list, width 4)
      bool_array  tuple[bool, ...]                (int list, width 1)
      attr        a tagged attribute object       (tagged attribute)
      attr_array  tuple of tagged attributes      (tagged Array attribute)
      hints       attrs.OptimizationHintsAttr     (untagged dictionary)
    """

    name: str
    kind: str
    enum: type[Enum] | None = None
    optional: bool = False
    default: Any = None
    since: str = "13.1"


@dataclass(frozen=True, slots=True)
class OpDef:
    name: str
    opcode: int
    since: str
    operands: tuple[OperandDef, ...]
    results: tuple[ResultDef, ...]
    attrs: tuple[AttrDef, ...]
    regions: int = 0
    # Bytecode layout
    flags: tuple[tuple[str, str], ...] = ()  # (name, since) per bit, bit 0 first
    counted_results: bool = False  # result types written as count + ids
    operand_count: str = "per_group"  # or "total": one count of all operands first
    # Properties used by the verifier, passes and interpreter
    traits: frozenset[str] = field(default_factory=frozenset)
    aliases: tuple[str, ...] = ()  # other spellings accepted by the parser
    # Text format: a string of nanotile.ir.asm_format's format language (parser + printer)
    asm: str | None = None
    # Test-only rows (cuda-tile's TestingOps, bytecode versions 250.x): kept out of OPS
    testing: bool = False
    # nanotile's own ops below the tile level (tile-layout): no opcode, never in bytecode,
    # not cuda_tile ops (kept out of OPS like the test-only rows)
    internal: bool = False

    def attr(self, name: str) -> AttrDef | None:
        for a in self.attrs:
            if a.name == name:
                return a
        return None

    def operand(self, name: str) -> OperandDef | None:
        for o in self.operands:
            if o.name == name:
                return o
        return None

    @property
    def has_variable_operands(self) -> bool:
        return any(o.kind != "single" for o in self.operands)

    @property
    def is_terminator(self) -> bool:
        return "terminator" in self.traits

    @property
    def is_pure(self) -> bool:
        return "pure" in self.traits


# --------------------------------------------------------------------------------------
# Helpers that keep the rows short


def _operands(spec: str) -> tuple[OperandDef, ...]:
    out = []
    for word in spec.split():
        name, _, since = word.partition("@")
        since = since or "13.1"
        if name.endswith("?"):
            out.append(OperandDef(name[:-1], "optional", since))
        elif name.endswith("*"):
            out.append(OperandDef(name[:-1], "variadic", since))
        else:
            out.append(OperandDef(name, "single", since))
    return tuple(out)


def _results(spec: str) -> tuple[ResultDef, ...]:
    out = []
    for word in spec.split():
        name, _, since = word.partition("@")
        out.append(ResultDef(name.rstrip("*"), name.endswith("*"), since or "13.1"))
    return tuple(out)


def _flags(spec: str) -> tuple[tuple[str, str], ...]:
    out = []
    for word in spec.split():
        name, _, since = word.partition("@")
        out.append((name, since or "13.1"))
    return tuple(out)


def enum(name: str, cls: type[Enum], **kw: Any) -> AttrDef:
    return AttrDef(name, "enum", cls, **kw)


def unit(name: str, **kw: Any) -> AttrDef:
    return AttrDef(name, "unit", optional=True, **kw)


def attr(name: str, kind: str, **kw: Any) -> AttrDef:
    return AttrDef(name, kind, **kw)


OPS: dict[str, OpDef] = {}
OPS_BY_OPCODE: dict[int, OpDef] = {}
ALIASES: dict[str, str] = {}
# Test-only ops (see the end of this file): found by lookup() and OPS_BY_OPCODE, so the
# text and bytecode paths handle them, but not listed in OPS, so no pass, verifier rule,
# interpreter or back end has to know them.
TESTING_OPS: dict[str, OpDef] = {}
# nanotile's internal ops (the end of this file): found by lookup() for the text format,
# absent from OPS and OPS_BY_OPCODE (no cuda_tile verifier rule, no bytecode form).
INTERNAL_OPS: dict[str, OpDef] = {}
NO_OPCODE = -1


def op(name: str, opcode: int, since: str = "13.1", *, operands: str = "",
       results: str = "result", attrs: tuple[AttrDef, ...] | list[AttrDef] = (),
       regions: int = 0, flags: str = "", counted_results: bool = False,
       operand_count: str = "per_group", traits: str = "",
       aliases: tuple[str, ...] = (), asm: str | None = None,
       testing: bool = False, internal: bool = False) -> None:
    d = OpDef(name, opcode, since, _operands(operands), _results(results), tuple(attrs),
              regions, _flags(flags), counted_results, operand_count,
              frozenset(traits.split()), aliases, asm, testing, internal)
    if internal:
        INTERNAL_OPS[name] = d
        return
    (TESTING_OPS if testing else OPS)[name] = d
    OPS_BY_OPCODE[opcode] = d
    for alias in aliases:
        ALIASES[alias] = name


def lookup(name: str) -> OpDef | None:
    """The row for a mnemonic (with or without ``cuda_tile.``), or None."""
    name = name.removeprefix("cuda_tile.")
    return OPS.get(name) or OPS.get(ALIASES.get(name, "")) or TESTING_OPS.get(name) \
        or INTERNAL_OPS.get(name)


# Attribute shorthands shared by many rows
_RND = enum("rounding_mode", RoundingMode, default=RoundingMode.nearest_even)
_FTZ = unit("flush_to_zero")
_OVF = enum("overflow", IntegerOverflow, default=IntegerOverflow.none)
_SGN = enum("signedness", Signedness)
_SEM = enum("memory_ordering_semantics", MemoryOrderingSemantics)
_SCOPE = enum("memory_scope", MemoryScope)
_OPT_SCOPE = enum("memory_scope", MemoryScope, optional=True)
_HINTS = attr("optimization_hints", "hints", optional=True)

# Text-format shorthands (the format language is described in nanotile/ir/asm_format.py)
_F_UN = "$source attr-dict : type($result,$source)"
_F_BIN = "$lhs , $rhs attr-dict : type($result,$lhs,$rhs)"
_F_CAST = "$source attr-dict : type($source) -> type($result)"
_F_TERM = "attr-dict ?( $operands : type($operands) )?"

# Trait sets
_P = "pure elementwise"
_MEM = "memory"

# --------------------------------------------------------------------------------------
# Elementwise integer and bitwise arithmetic

op("absi", 0x01, operands="source", traits=_P,
   asm=_F_UN)
op("addi", 0x03, operands="lhs rhs", attrs=[_OVF], traits=_P,
   asm=("$lhs , $rhs ?( 'overflow ~ @overflow:angle )? attr-dict : "
       "type($result,$lhs,$rhs)"))
op("andi", 0x04, operands="lhs rhs", traits=_P,
   asm=_F_BIN)
op("cmpi", 0x0F, operands="lhs rhs",
   attrs=[enum("comparison_predicate", ComparisonPredicate), _SGN], traits=_P,
   asm=("@comparison_predicate $lhs , $rhs , @signedness attr-dict : "
       "type($lhs,$rhs) -> type($result)"))
op("divi", 0x15, operands="lhs rhs",
   attrs=[_SGN, enum("rounding", RoundingMode, default=RoundingMode.zero)], traits=_P,
   asm=("$lhs , $rhs @signedness ?( 'rounding ~ @rounding:angle )? "
       "attr-dict : type($result,$lhs,$rhs)"))
op("maxi", 0x46, operands="lhs rhs", attrs=[_SGN], traits=_P,
   asm="$lhs , $rhs @signedness attr-dict : type($result,$lhs,$rhs)")
op("mini", 0x48, operands="lhs rhs", attrs=[_SGN], traits=_P,
   asm="$lhs , $rhs @signedness attr-dict : type($result,$lhs,$rhs)")
op("mulhii", 0x4D, operands="x y", traits=_P,
   asm="$x , $y attr-dict : type($result,$x,$y)")
op("muli", 0x4E, operands="lhs rhs", attrs=[_OVF], traits=_P,
   asm=("$lhs , $rhs ?( 'overflow ~ @overflow:angle )? attr-dict : "
       "type($result,$lhs,$rhs)"))
op("negi", 0x50, operands="source",
   attrs=[enum("overflow", IntegerOverflow, default=IntegerOverflow.none, since="13.2")],
   traits=_P,
   asm=("$source ?( 'overflow ~ @overflow:angle )? attr-dict : "
       "type($result,$source)"))
op("ori", 0x52, operands="lhs rhs", traits=_P,
   asm=_F_BIN)
op("remi", 0x5A, operands="lhs rhs", attrs=[_SGN], traits=_P,
   asm="$lhs , $rhs @signedness attr-dict : type($result,$lhs,$rhs)")
op("shli", 0x60, operands="lhs rhs", attrs=[_OVF], traits=_P,
   asm=("$lhs , $rhs ?( 'overflow ~ @overflow:angle )? attr-dict : "
       "type($result,$lhs,$rhs)"))
op("shri", 0x61, operands="lhs rhs", attrs=[_SGN], traits=_P,
   asm="$lhs , $rhs @signedness attr-dict : type($result,$lhs,$rhs)")
op("subi", 0x68, operands="lhs rhs", attrs=[_OVF], traits=_P,
   asm=("$lhs , $rhs ?( 'overflow ~ @overflow:angle )? attr-dict : "
       "type($result,$lhs,$rhs)"))
op("xori", 0x6C, operands="lhs rhs", traits=_P,
   asm=_F_BIN)

# --------------------------------------------------------------------------------------
# Elementwise floating point arithmetic and math

op("absf", 0x00, operands="source", traits=_P,
   asm=_F_UN)
op("addf", 0x02, operands="lhs rhs", attrs=[_RND, _FTZ], flags="flush_to_zero", traits=_P,
   asm=("$lhs , $rhs !rounding(rounding_mode) ?( 'flush_to_zero "
       "@flush_to_zero )? attr-dict : type($result,$lhs,$rhs)"))
op("ceil", 0x0D, operands="source", traits=_P,
   asm=_F_UN)
op("cmpf", 0x0E, operands="lhs rhs",
   attrs=[enum("comparison_predicate", ComparisonPredicate),
          enum("comparison_ordering", ComparisonOrdering)], traits=_P,
   asm=("@comparison_predicate @comparison_ordering $lhs , $rhs attr-dict : "
       "type($lhs,$rhs) -> type($result)"))
op("divf", 0x14, operands="lhs rhs", attrs=[_RND, _FTZ], flags="flush_to_zero", traits=_P,
   asm=("$lhs , $rhs !rounding(rounding_mode) ?( 'flush_to_zero "
       "@flush_to_zero )? attr-dict : type($result,$lhs,$rhs)"))
op("floor", 0x27, operands="source", traits=_P,
   asm=_F_UN)
op("fma", 0x28, operands="lhs rhs acc", attrs=[_RND, _FTZ], flags="flush_to_zero", traits=_P,
   asm=("$lhs , $rhs , $acc !rounding(rounding_mode) ?( 'flush_to_zero "
       "@flush_to_zero )? attr-dict : type($result,$lhs,$rhs,$acc)"))
op("maxf", 0x45, operands="lhs rhs", attrs=[unit("propagate_nan"), _FTZ],
   flags="propagate_nan flush_to_zero", traits=_P,
   asm=("$lhs , $rhs !units(flush_to_zero,propagate_nan) attr-dict : "
       "type($result,$lhs,$rhs)"))
op("minf", 0x47, operands="lhs rhs", attrs=[unit("propagate_nan"), _FTZ],
   flags="propagate_nan flush_to_zero", traits=_P,
   asm=("$lhs , $rhs !units(flush_to_zero,propagate_nan) attr-dict : "
       "type($result,$lhs,$rhs)"))
op("mulf", 0x4C, operands="lhs rhs", attrs=[_RND, _FTZ], flags="flush_to_zero", traits=_P,
   asm=("$lhs , $rhs !rounding(rounding_mode) ?( 'flush_to_zero "
       "@flush_to_zero )? attr-dict : type($result,$lhs,$rhs)"))
op("negf", 0x4F, operands="source", traits=_P,
   asm=_F_UN)
op("remf", 0x59, operands="lhs rhs", traits=_P,
   asm=_F_BIN)
op("subf", 0x67, operands="lhs rhs", attrs=[_RND, _FTZ], flags="flush_to_zero", traits=_P,
   asm=("$lhs , $rhs !rounding(rounding_mode) ?( 'flush_to_zero "
       "@flush_to_zero )? attr-dict : type($result,$lhs,$rhs)"))

op("cos", 0x12, operands="source", traits=_P,
   asm=_F_UN)
op("cosh", 0x13, operands="source", traits=_P,
   asm=_F_UN)
op("exp", 0x17, operands="source",
   attrs=[enum("rounding_mode", RoundingMode, default=RoundingMode.full, since="13.3")],
   traits=_P,
   asm="$source !rounding(rounding_mode) attr-dict : type($result,$source)")
op("exp2", 0x18, operands="source", attrs=[_FTZ], flags="flush_to_zero", traits=_P,
   asm=("$source ?( 'flush_to_zero @flush_to_zero )? attr-dict : "
       "type($result,$source)"))
op("log", 0x3F, operands="source", traits=_P,
   asm=_F_UN)
op("log2", 0x40, operands="source", traits=_P,
   asm=_F_UN)
op("fpowf", 0x54, operands="source exponent", traits=_P, aliases=("pow",),
   asm="$source , $exponent attr-dict : type($result,$source,$exponent)")
op("rsqrt", 0x5D, operands="source", attrs=[_FTZ], flags="flush_to_zero", traits=_P,
   asm=("$source ?( 'flush_to_zero @flush_to_zero )? attr-dict : "
       "type($result,$source)"))
op("sin", 0x62, operands="source", traits=_P,
   asm=_F_UN)
op("sinh", 0x63, operands="source", traits=_P,
   asm=_F_UN)
op("sqrt", 0x64, operands="source", attrs=[_RND, _FTZ], flags="flush_to_zero", traits=_P,
   asm=("$source !rounding(rounding_mode) ?( 'flush_to_zero @flush_to_zero "
       ")? attr-dict : type($result,$source)"))
op("tan", 0x69, operands="source", traits=_P,
   asm=_F_UN)
op("tanh", 0x6A, operands="source",
   attrs=[enum("rounding_mode", RoundingMode, default=RoundingMode.full, since="13.2")],
   traits=_P,
   asm="$source !rounding(rounding_mode) attr-dict : type($result,$source)")
op("atan2", 0x6E, "13.2", operands="x y", traits=_P,
   asm="$x , $y attr-dict : type($result,$x,$y)")
op("fpowi", 0x79, "13.4", operands="source exponent", traits=_P,
   asm=("$source , $exponent attr-dict : type($result,$source) , "
       "type($exponent)"))

# --------------------------------------------------------------------------------------
# Conversions

op("bitcast", 0x09, operands="source", traits=_P,
   asm=_F_CAST)
op("exti", 0x25, operands="from", results="to", attrs=[_SGN], traits=_P,
   asm="$from @signedness attr-dict : type($from) -> type($to)")
op("ftof", 0x2A, operands="from", results="to", attrs=[_RND], traits=_P,
   asm="$from !rounding(rounding_mode) attr-dict : type($from) -> type($to)")
op("ftoi", 0x2B, operands="from", results="to",
   attrs=[_SGN, enum("rounding_mode", RoundingMode,
                      default=RoundingMode.nearest_int_to_zero),
          unit("saturating", since="13.4")], flags="saturating@13.4", traits=_P,
   asm=("$from @signedness !rounding(rounding_mode) ?( 'saturating "
       "@saturating )? attr-dict : type($from) -> type($to)"))
op("int_to_ptr", 0x33, operands="source", traits=_P,
   asm=_F_CAST)
op("itof", 0x3B, operands="from", results="to", attrs=[_SGN, _RND], traits=_P,
   asm=("$from @signedness !rounding(rounding_mode) attr-dict : type($from) "
       "-> type($to)"))
op("ptr_to_int", 0x56, operands="source", traits=_P,
   asm=_F_CAST)
op("ptr_to_ptr", 0x57, operands="source", traits=_P,
   asm=_F_CAST)
op("trunci", 0x6B, operands="from", results="to", attrs=[_OVF], traits=_P,
   asm=("$from ?( 'overflow ~ @overflow:angle )? attr-dict : type($from) -> "
       "type($to)"))

# --------------------------------------------------------------------------------------
# Tile construction and shape

op("broadcast", 0x0B, operands="source", traits="pure",
   asm=_F_CAST)
op("cat", 0x0C, operands="lhs rhs", attrs=[attr("dim", "int")], traits="pure",
   asm=("$lhs , $rhs 'dim = @dim attr-dict : type($lhs) , type($rhs) -> "
       "type($result)"))
op("constant", 0x10, attrs=[attr("value", "dense")], traits="pure constant",
   asm="!dense(value,result) attr-dict")
op("extract", 0x26, operands="source indices*", counted_results=True,
   operand_count="total", traits="pure",
   asm="$source [ $indices ] attr-dict : type($source) -> type($result)")
op("insert", 0x76, "13.4", operands="source destination indices*", counted_results=True,
   operand_count="total", traits="pure",
   asm=("$source , $destination [ $indices ] attr-dict : type($source) , "
       "type($destination,$result)"))
op("iota", 0x3A, traits="pure",
   asm="attr-dict : type($result)")
op("offset", 0x51, operands="ptr offset", traits=_P,
   asm=("$ptr , $offset attr-dict : type($ptr) , type($offset) -> "
       "type($result)"))
op("permute", 0x53, operands="source", attrs=[attr("permutation", "i32_array")],
   traits="pure",
   asm="$source @permutation attr-dict : type($source) -> type($result)")
op("reshape", 0x5B, operands="source", traits="pure",
   asm=_F_CAST)
op("select", 0x5F, operands="cond val_if_true val_if_false", traits=_P,
   asm=("$cond , $val_if_true , $val_if_false attr-dict : type($cond) , "
       "type($result,$val_if_true,$val_if_false)"))
op("pack", 0x6F, "13.3", operands="source", traits="pure",
   asm=_F_CAST)
op("unpack", 0x70, "13.3", operands="source", traits="pure",
   asm=_F_CAST)

# --------------------------------------------------------------------------------------
# Matrix multiply-accumulate

op("mmaf", 0x49, operands="lhs rhs acc", attrs=[unit("fast_acc", since="13.3")],
   flags="fast_acc@13.3", traits="pure",
   asm=("$lhs , $rhs , $acc ?( 'fast_acc @fast_acc )? attr-dict : "
       "type($lhs) , type($rhs) , type($acc,$result)"))
op("mmai", 0x4A, operands="lhs rhs acc",
   attrs=[enum("signedness_lhs", Signedness), enum("signedness_rhs", Signedness)],
   traits="pure",
   asm=("$lhs , $rhs , $acc @signedness_lhs @signedness_rhs attr-dict : "
       "type($lhs) , type($rhs) , type($acc,$result)"))
op("mmaf_scaled", 0x72, "13.3", operands="lhs rhs acc lhs_scale rhs_scale", traits="pure",
   asm=("$lhs , $rhs , $acc , $lhs_scale , $rhs_scale attr-dict : "
       "type($lhs) , type($rhs) , type($acc,$result) , type($lhs_scale) , "
       "type($rhs_scale)"))

# --------------------------------------------------------------------------------------
# Reductions (the region combines two elements per operand)

op("reduce", 0x58, operands="operands*", results="results*",
   attrs=[attr("dim", "int"), attr("identities", "attr_array")], regions=1,
   counted_results=True, operand_count="total", traits="pure",
   asm=("$operands attr-dict _ 'dim ~ = ~ @dim 'identities ~ = ~ "
       "@identities : type($operands) -> type($results) !arg_region"))
op("scan", 0x5E, operands="operands*", results="results*",
   attrs=[attr("dim", "int"), attr("reverse", "bool"), attr("identities", "attr_array")],
   regions=1, counted_results=True, operand_count="total", traits="pure",
   asm=("$operands attr-dict _ 'dim ~ = ~ @dim 'reverse ~ = ~ @reverse "
       "'identities ~ = ~ @identities : type($operands) -> type($results) "
       "!arg_region"))

# --------------------------------------------------------------------------------------
# Views and memory

op("make_tensor_view", 0x43, operands="base dynamicShape* dynamicStrides*",
   counted_results=True, traits="pure view",
   asm="!make_tensor_view")
op("make_partition_view", 0x42, operands="tensor_view", traits="pure view",
   asm="$tensor_view attr-dict : type($result)")
op("make_strided_view", 0x74, "13.3", operands="tensor_view", traits="pure view",
   asm="$tensor_view attr-dict : type($result)")
op("make_gather_scatter_view", 0x73, "13.3", operands="tensor_view", traits="pure view",
   asm="$tensor_view attr-dict : type($result)")
op("get_index_space_shape", 0x2D, operands="src", results="result*",
   counted_results=True, traits="pure",
   asm="$src attr-dict : type($src) -> type*($result)")
op("get_tensor_shape", 0x2F, operands="src", results="result*", counted_results=True,
   traits="pure",
   asm="$src attr-dict : type($src) -> type*($result)")
op("load_ptr_tko", 0x3D, operands="source mask? paddingValue? token?",
   results="result result_token", attrs=[_SEM, _OPT_SCOPE, _HINTS],
   flags="memory_scope optimization_hints mask paddingValue token", traits=_MEM,
   asm=("@memory_ordering_semantics ?( @memory_scope )? $source ?( , $mask "
       ")? ?( , $paddingValue )? ?( 'token ~ = ~ $token )? ?( "
       "'optimization_hints = @optimization_hints )? attr-dict : "
       "type($source) ?( , type($mask) )? ?( , type($paddingValue) )? -> "
       "type($result) , type($result_token)"))
op("store_ptr_tko", 0x65, operands="destination value mask? token?",
   results="result_token", attrs=[_SEM, _OPT_SCOPE, _HINTS],
   flags="memory_scope optimization_hints mask token", traits=_MEM,
   asm=("@memory_ordering_semantics ?( @memory_scope )? $destination , "
       "$value ?( , $mask )? ?( 'token ~ = ~ $token )? ?( "
       "'optimization_hints = @optimization_hints )? attr-dict : "
       "type($destination) , type($value) ?( , type($mask) )? -> "
       "type($result_token)"))
op("load_view_tko", 0x3E, operands="view index* token?", results="tile result_token",
   attrs=[_SEM, _OPT_SCOPE, _HINTS, attr("inbounds", "bool_array", optional=True,
                                          since="13.4")],
   flags="memory_scope optimization_hints token", counted_results=True, traits=_MEM,
   asm=("@memory_ordering_semantics ?( @memory_scope )? $view [ $index ] ?( "
       "'token = $token )? ?( 'inbounds = @inbounds )? ?( "
       "'optimization_hints = @optimization_hints )? attr-dict-with-keyword : "
       "type($view) ?( , !index_types(index) )? -> type($tile) , "
       "type($result_token)"))
op("store_view_tko", 0x66, operands="tile view index* token?", results="result_token",
   attrs=[_SEM, _OPT_SCOPE, _HINTS, attr("inbounds", "bool_array", optional=True,
                                          since="13.4")],
   flags="memory_scope optimization_hints token", counted_results=True, traits=_MEM,
   asm=("@memory_ordering_semantics ?( @memory_scope )? $tile , $view [ "
       "$index ] ?( 'token = $token )? ?( 'inbounds = @inbounds )? ?( "
       "'optimization_hints = @optimization_hints )? attr-dict-with-keyword : "
       "type($tile) , type($view) ?( , !index_types(index) )? -> "
       "type($result_token)"))
op("alloca", 0x71, "13.3", attrs=[attr("num_elem", "int"), attr("alignment", "int"),
                                  unit("global")], flags="global", traits=_MEM,
   asm=("'num_elem = @num_elem , 'alignment = @alignment ?( 'global @global "
       ")? attr-dict : type($result)"))
op("get_global", 0x2C, attrs=[attr("name", "symbol")], traits="pure",
   asm="@name attr-dict : type($result)")

# --------------------------------------------------------------------------------------
# Atomics

op("atomic_cas_tko", 0x07, operands="pointers cmp val mask? token?",
   results="result result_token", attrs=[_SEM, _SCOPE], flags="mask token", traits=_MEM,
   asm=("@memory_ordering_semantics @memory_scope $pointers , $cmp , $val "
       "?( , $mask )? ?( 'token ~ = ~ $token )? attr-dict : "
       "type($pointers) , type($val,$cmp) ?( , type($mask) )? -> "
       "type($result) , type($result_token)"))
op("atomic_rmw_tko", 0x08, operands="pointers arg mask? token?",
   results="result result_token",
   attrs=[_SEM, _SCOPE, enum("mode", AtomicRMWMode)], flags="mask token", traits=_MEM,
   asm=("@memory_ordering_semantics @memory_scope $pointers , @mode , $arg "
       "?( , $mask )? ?( 'token ~ = ~ $token )? attr-dict : "
       "type($pointers) , type($arg) ?( , type($mask) )? -> type($result) "
       ", type($result_token)"))
op("atomic_red_view_tko", 0x75, "13.3", operands="view index* value token?",
   results="result_token", attrs=[_SEM, _SCOPE, enum("mode", AtomicRMWMode)],
   flags="token", counted_results=True, traits=_MEM,
   asm=("@memory_ordering_semantics @memory_scope $view [ $index ] , @mode "
       ", $value ?( 'token = $token )? attr-dict-with-keyword : type($value) , "
       "type($view) ?( , !index_types(index) )? -> type($result_token)"))

# --------------------------------------------------------------------------------------
# Tokens and synchronisation

op("make_token", 0x44, traits="pure",
   asm="attr-dict : type($result)")
op("join_tokens", 0x3C, operands="tokens*", counted_results=True, operand_count="total",
   traits="pure",
   asm="$tokens attr-dict : type($result)")
op("gdc_launch_dependents_tko", 0x77, "13.4", operands="token?", results="result_token",
   operand_count="total", traits=_MEM,
   asm="?( 'token = $token )? attr-dict -> type($result_token)")
op("gdc_wait_tko", 0x78, "13.4", operands="token?", results="result_token",
   operand_count="total", traits=_MEM,
   asm="?( 'token = $token )? attr-dict -> type($result_token)")
op("memory_fence_alias_tko", 0x7A, "13.4", operands="token", results="result_token",
   traits=_MEM,
   asm="?( 'token = $token )? attr-dict -> type($result_token)")

# --------------------------------------------------------------------------------------
# Control flow

op("if", 0x32, operands="condition", results="results*", regions=2, counted_results=True,
   traits="control",
   asm=("$condition ?( -> ( type($results) ) )? !then ?( 'else !else )? "
       "attr-dict"))
op("for", 0x29, operands="lowerBound upperBound step initValues*",
   results="resultValues*", attrs=[unit("unsignedCmp", since="13.2")], regions=1,
   flags="unsignedCmp@13.2", counted_results=True, operand_count="total",
   traits="control loop",
   asm="!for")
op("loop", 0x41, operands="initValues*", results="resultValues*", regions=1,
   counted_results=True, operand_count="total", traits="control loop",
   asm="!loop")
for _name, _opcode in (("break", 0x0A), ("continue", 0x11), ("return", 0x5C),
                       ("yield", 0x6D)):
    op(_name, _opcode, operands="operands*", results="", counted_results=True,
       operand_count="total", traits="terminator", asm=_F_TERM)
op("assert", 0x05, operands="condition", results="", attrs=[attr("message", "string")],
   traits=_MEM,
   asm="$condition , @message attr-dict : type($condition)")

# --------------------------------------------------------------------------------------
# Program structure, grid, miscellany

op("module", 0x4B, results="",
   attrs=[attr("sym_name", "symbol"),
          attr("producer", "string", optional=True, since="13.3")],
   regions=1, flags="producer@13.3", traits="item",
   asm="@sym_name attr-dict")
op("entry", 0x16, results="",
   attrs=[attr("sym_name", "symbol"), attr("function_type", "type"),
          attr("arg_attrs", "attr_array", optional=True),
          attr("res_attrs", "attr_array", optional=True), _HINTS],
   regions=1, flags="res_attrs optimization_hints arg_attrs", traits="item",
   asm="!entry")
op("global", 0x31, results="",
   attrs=[attr("sym_name", "symbol"), attr("value", "dense"),
          attr("alignment", "int", default=0),
          enum("symbol_visibility", SymbolVisibility, default=SymbolVisibility.public,
               since="13.3"),
          unit("constant", since="13.3")],
   flags="constant@13.3", traits="item",
   asm=("!visibility(symbol_visibility) ?( 'constant @constant )? @sym_name "
       "?( 'alignment = @alignment )? attr-dict !dense(value)"))
op("get_num_tile_blocks", 0x2E, results="gridSize_x gridSize_y gridSize_z", traits="pure",
   asm="attr-dict : type($gridSize_x,$gridSize_y,$gridSize_z)")
op("get_tile_block_id", 0x30, results="blockId_x blockId_y blockId_z", traits="pure",
   asm="attr-dict : type($blockId_x,$blockId_y,$blockId_z)")
op("assume", 0x06, operands="value", attrs=[attr("predicate", "attr")], traits="pure",
   asm="@predicate , $value attr-dict : type($value,$result)")
op("print_tko", 0x55, operands="args* token?@13.2", results="result_token@13.2",
   attrs=[attr("str", "string")], flags="token@13.2", counted_results=True, traits=_MEM,
   asm=("@str ?( , $args )? ?( 'token ~ = ~ $token )? attr-dict ?( : "
       "type($args) )? -> type($result_token)"))

# --------------------------------------------------------------------------------------
# Operands whose type the text does not write (no type($x) in the op's asm): cuda-tile's
# parser resolves them against the one type their ODS constraint builds (a 0-d tile of
# i32 for indices, of i1 for a condition), so the text of a use of another type is an
# error there; token operands are tokens.

def _scalar(name: str) -> Any:
    from .types import ELEMENT_TYPES, TileType

    return TileType((), ELEMENT_TYPES[name])


IMPLIED_OPERAND_TYPES: dict[str, tuple[tuple[str, Any], ...]] = {
    "extract": (("indices", _scalar("i32")),),
    "insert": (("indices", _scalar("i32")),),
    "if": (("condition", _scalar("i1")),),
}

# --------------------------------------------------------------------------------------
# TEST-ONLY ops. NVIDIA's cuda-tile defines these (TestingOps.td) in builds with tests
# enabled, with opcodes from 0x3000 and the test-only bytecode versions 250.0 and 250.1,
# to exercise version gating: a 250.1 attribute/operand/result on a 250.0 op. Production
# files (13.x) can never contain them, since 250.0 is newer than every 13.x version.
# (0x3001 is `testing$func`, written as a function, not as an op: TESTING_FUNC below.)
# Not modelled: the 250.0 `priority` enum and the 250.1 `test_attr` attribute of
# bytecode_test_evolution; their flags bits are reserved (the reader rejects them set).

op("testing$bytecode_test_new_attribute", 0x3000, "250.0", results="",
   attrs=[unit("new_flag", since="250.1"),
          attr("new_param", "int", default=42, since="250.1")],
   flags="new_flag@250.1", testing=True,
   asm="?( 'new_flag @new_flag )? ?( 'new_param = @new_param )? attr-dict")
op("testing$bytecode_test_evolution", 0x3002, "250.0",
   operands="inputs* optional_token?@250.1", results="result_token@250.1",
   attrs=[attr("new_attr", "int", optional=True, since="250.1")],
   # bit order: 250.0 attributes, then 250.1 attributes, then 250.1 operands
   flags="priority new_attr@250.1 test_attr@250.1 optional_token@250.1", testing=True,
   asm=("~ ( $inputs : qtype($inputs) ) ?( 'new_attr = @new_attr )? "
        "?( 'token = $optional_token : type($optional_token) )? "
        "-> type($result_token) attr-dict"))

# cuda-tile's test-only function item: written and read like an entry (not in any table:
# the bytecode has it as a function without the entry flag).
TESTING_FUNC = OpDef("testing$func", NO_OPCODE, "13.1", (), (),
                     (AttrDef("sym_name", "symbol"), AttrDef("function_type", "type"),
                      AttrDef("optimization_hints", "hints", optional=True)),
                     regions=1, traits=frozenset({"item"}), asm="!entry")

# --------------------------------------------------------------------------------------
# INTERNAL ops: nanotile's own, below the tile level (language tile-layout, DESIGN.md
# "Layouts"). They print and parse like the rows above, so a dump of a late stage is
# valid input again, but they have no opcode and the bytecode writer refuses them.

# The same tile in another layout: `%s = convert_layout %x : tile<8xf32, #blocked<...>>
# -> tile<8xf32, #shared<offset=?>>` (assign-layouts inserts it where data moves through
# shared memory; the PTX back end lowers it to barriers and stores).
op("convert_layout", NO_OPCODE, operands="source", traits="pure", internal=True,
   asm=_F_CAST)

# A scheduling barrier of the whole CTA (bar.sync 0): insert-barriers puts one where
# threads must wait for each other (shared-memory reuse, memory order), in tile-layout
# and simt.
op("barrier", NO_OPCODE, results="", traits="synchronization", internal=True,
   asm="attr-dict")

# ---- simt: one thread's registers (types `tile<8xf32, #regs>`: eight registers) ----------
# distribute writes these; ops of the table above (elementwise, control flow, loads and
# stores through pointers, ...) also appear in simt, applied to each register.

# Every register holds the same value: `%r = splat %x : tile<f32, #regs> -> tile<8xf32, #regs>`.
op("splat", NO_OPCODE, operands="source", traits="pure", internal=True,
   asm=_F_CAST)
# Registers chosen from the operands' registers (concatenated): a renaming, no instruction.
op("pick", NO_OPCODE, operands="sources*", attrs=[attr("registers", "i32_array")],
   traits="pure", internal=True,
   asm="$sources @registers attr-dict : type($sources) -> type($result)")
# The coordinate along `dim` of the element each register holds in a distributed layout:
# `%c = coordinates 1 of tile<64x64xf32, #blocked<...>> : tile<32xi32, #regs>`.
op("coordinates", NO_OPCODE, attrs=[attr("dim", "int"), attr("of", "type")],
   traits="pure", internal=True,
   asm="@dim 'of @of attr-dict : type($result)")
# True in the one thread that owns its elements of a layout (the others hold copies).
op("is_owner", NO_OPCODE, attrs=[attr("of", "type")], traits="pure", internal=True,
   asm="'of @of attr-dict : type($result)")
# Each register exchanged with the same register of lane (lane xor mask): shfl.sync.bfly.
op("shuffle_xor", NO_OPCODE, operands="source", attrs=[attr("mask", "int")],
   traits="pure", internal=True,
   asm="$source , @mask attr-dict : type($source,$result)")
# Registers read from other lanes of the warp (shfl.sync.idx), by a plan of
# nanotile.ir.layouts.ShufflePlan: result register r of the thread with %tid.x bits t is
# register `registers[r] ^ register_map(t)` of lane `lanes[r] ^ lane_map(t)` (each map the
# XOR of its entries for the bits set in t: lane bits 0-4, then warp bits).
op("shuffle_idx", NO_OPCODE, operands="source",
   attrs=[attr("registers", "i32_array"), attr("lanes", "i32_array"),
          attr("lane_map", "i32_array"), attr("register_map", "i32_array")],
   traits="pure", internal=True,
   asm=("$source @registers 'lanes @lanes 'lane_map @lane_map 'register_map @register_map "
        "attr-dict : type($source) -> type($result)"))
# A thread's registers of a distributed tile (`of`) written to / read from a shared
# buffer (`buffer`, a #shared tile type), each element at its place in the buffer.
# (``owners_only``: only the thread owning each element writes it: the others' copies
# are not the same value, e.g. the result of an atomic applied by the owner.)
op("shared_store", NO_OPCODE, operands="value", results="",
   attrs=[attr("of", "type"), attr("buffer", "type"), unit("owners_only")],
   traits="memory", internal=True,
   asm="$value 'of @of 'to @buffer ?( 'owners_only @owners_only )? attr-dict : "
       "type($value)")
op("shared_load", NO_OPCODE, attrs=[attr("of", "type"), attr("buffer", "type")],
   traits="memory", internal=True,
   asm="'from @buffer 'as @of attr-dict : type($result)")
# Register k reads the element at row-major index indices[k] of a row-major buffer; with
# `vector` N, registers k..k+N-1 (k a multiple of N) read elements indices[k]..+N-1, one
# aligned vector (the other indices are not read).
op("shared_gather", NO_OPCODE, operands="indices",
   attrs=[attr("buffer", "type"), attr("vector", "int", optional=True)],
   traits="memory", internal=True,
   asm=("$indices 'from @buffer ?( 'vector @vector )? attr-dict : "
        "type($indices) -> type($result)"))
# The result tile of a matrix multiply-accumulate on the tensor cores: the accumulator's
# registers in its fragment layout (`of`), A and B in shared memory (`lhs`, `rhs`), the
# mma.sync instruction and its K (lower-mma expands it into ldmatrix + mma_sync).
op("warp_mma", NO_OPCODE, operands="acc",
   attrs=[attr("lhs", "type"), attr("rhs", "type"), attr("of", "type"),
          attr("instruction", "string"), attr("k", "int"), attr("warps", "i32_array")],
   traits="pure", internal=True,
   asm=("$acc 'lhs @lhs 'rhs @rhs 'as @of 'using @instruction 'k @k 'warps @warps "
        "attr-dict : type($acc,$result)"))
# mma.sync fragments from shared memory: one ldmatrix.x{count}[.trans] per register of
# the address layout in `of` listed in `instructions` (that register's element, in this
# lane, starts the 16-byte row the lane addresses); `count` b32 registers each.
op("ldmatrix", NO_OPCODE,
   attrs=[attr("buffer", "type"), attr("of", "type"), attr("count", "int"),
          unit("trans"), attr("instructions", "i32_array")],
   traits="memory", internal=True,
   asm=("'from @buffer 'at @of 'x @count ?( 'trans @trans )? @instructions attr-dict : "
        "type($result)"))
# One mma.sync (`instruction`) on fragments a, b and accumulator c.
op("mma_sync", NO_OPCODE, operands="a b c", attrs=[attr("instruction", "string")],
   traits="pure", internal=True,
   asm="$a , $b , $c 'using @instruction attr-dict : type($a) , type($b) , type($c,$result)")
# print_tko from thread 0, its tiles read from shared memory (`arguments`: a function
# type whose inputs are their types).
op("vprintf", NO_OPCODE, results="", attrs=[attr("str", "string"),
                                            attr("arguments", "type")],
   traits="memory", internal=True,
   asm="@str 'of @arguments attr-dict")
