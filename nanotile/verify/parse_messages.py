"""The reference's parse-time diagnostics, for the text parser to emit.

MLIR reports some rules while parsing, before any verifier runs: an operand whose use
type differs from its definition, a keyword that is not a valid enum value, a malformed
type. The reference tests expect these texts exactly, so they are kept here, next to
the verifier's messages, and the parser calls these helpers (types.py holds the type
rules). Errors raised inside an op's custom syntax are prefixed with
``custom op 'cuda_tile.<name>'`` by MLIR: see ``custom_op``.
"""

from __future__ import annotations

from nanotile.ir.types import Type

from .engine import q

PRIOR_USE_NOTE = "prior use here"


def type_mismatch(value_name: str, use_type: Type, def_type: Type) -> str:
    """A value used with another type than it was defined with (error at the use; attach
    a note ``PRIOR_USE_NOTE`` at the definition)."""
    name = value_name if value_name.startswith("%") else f"%{value_name}"
    return (f"use of value '{name}' expects different type than prior uses: "
            f"{q(use_type)} vs {q(def_type)}")


def custom_op(op_name: str, message: str) -> str:
    """An error raised while parsing an op's custom syntax."""
    name = op_name if op_name.startswith("cuda_tile.") else f"cuda_tile.{op_name}"
    return f"custom op '{name}' {message}"


# Rounding modes each op's custom syntax accepts, and whether the message names the
# rejected keyword (", got: 'x'"): the IEEE form (addf, subf, mulf, fma, itof, ftof) and
# ftoi reject valid modes they do not allow; the others only reject unknown words and
# leave the rest to the verifier. ftof also takes nearest_away, which cuTile 1.7 writes
# and tileiras 13.4 accepts (the 13.3 reference does not).
_IEEE = ("nearest_even", "zero", "negative_inf", "positive_inf")
ROUNDING_KEYWORDS: dict[str, tuple[tuple[str, ...], bool]] = {
    **{op: (_IEEE, True) for op in ("addf", "subf", "mulf", "fma", "itof")},
    "ftof": (_IEEE + ("nearest_away",), True),
    "ftoi": (("nearest_int_to_zero",), True),
    "divf": (("nearest_even", "zero", "negative_inf", "positive_inf", "approx", "full"),
             False),
    "sqrt": (("nearest_even", "zero", "negative_inf", "positive_inf", "approx"), False),
    "tanh": (("approx", "full"), False),
    "exp": (("approx", "full"), False),
}


def rounding_keyword(op_name: str, got: str, known_mode: bool) -> str | None:
    """The error for ``rounding<got>`` on ``op_name``, or None when the parser accepts it.

    ``known_mode``: whether ``got`` names a rounding mode at all.
    """
    allowed, names_got = ROUNDING_KEYWORDS.get(op_name, ((), False))
    if not allowed or got in allowed:
        return None
    if known_mode and not names_got:
        return None  # a valid mode this op does not allow: the verifier reports it
    listed = ", ".join(f"'{m}'" for m in allowed)
    message = f"expected rounding mode to be one of: {listed}"
    return message + (f", got: '{got}'" if names_got else "")


SIGNEDNESS_KEYWORD = "expected signedness to be one of: {'signed', 'unsigned'}"
PREDICATE_KEYWORD = ("expected 'comparison_predicate' to be one of: {'equal', 'not_equal', "
                     "'less_than', 'less_than_or_equal', 'greater_than', "
                     "'greater_than_or_equal'}")
ORDERING_KEYWORD = "expected 'comparison_ordering' to be one of: {'ordered', 'unordered'}"


def memory_ordering_keyword(got: str) -> str:
    """An unknown ordering on loads and stores (``load_ptr_tko invalid ...``)."""
    return (f'invalid memory_ordering_semantics attribute specification. Got "{got}" but '
            "expect one of: weak, relaxed, acquire, release, acq_rel")


def memory_scope_keyword(got: str) -> str:
    return (f'invalid memory_scope attribute specification. Got "{got}" but expect one '
            "of: tl_blk, device, sys")


def weak_with_scope(scope: str) -> str:
    """``weak`` followed by a scope keyword on a load or store."""
    return ("operation specifies weak memory ordering semantics, but then provides "
            f'"{scope}" scope, expected no memory scope.')


def enum_keyword(attribute: str, allowed: tuple[str, ...]) -> str:
    """An unknown keyword for an enum attribute parsed generically (atomics)."""
    return ("expected string or keyword containing one of the following enum values for "
            f"attribute '{attribute}' [{', '.join(allowed)}]")


def results_to_bind(defined: int, provided: int) -> str:
    """``%a, %b, %c = op`` when the op defines another number of results."""
    return f"operation defines {defined} results but was provided {provided} to bind"
