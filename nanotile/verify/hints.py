"""optimization_hints on entries and memory ops.

Hints are advice, so unknown targets or keys and out-of-range values are only reported
when asked (``-Wunsupported-hints``: warnings; with ``-Werr-hints`` they also make the
op fail with "Optimization hints verification failed"), as in the reference.
"""

from __future__ import annotations

from nanotile.ir.attrs import BoolAttr, DictAttr, IntegerAttr, OptimizationHintsAttr
from nanotile.ir.core import Operation

from .engine import current_options, fail, warn

KNOWN_TARGETS = ("sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103",
                 "sm_110", "sm_120", "sm_121", "default")
_SINGLE_CTA_TARGETS = ("sm_80", "sm_86", "sm_87", "sm_88", "sm_89")


def _keys_for(op: Operation) -> tuple[str, ...]:
    if op.name == "entry":
        return ("num_cta_in_cga", "num_worker_warps_per_cta", "occupancy")
    if op.name in ("load_view_tko", "store_view_tko"):
        return ("latency", "allow_tma")
    if op.name in ("load_ptr_tko", "store_ptr_tko"):
        return ("latency",)
    return ()


def _int(value) -> int | None:
    if isinstance(value, IntegerAttr):
        return value.value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _pow2_at_most(n: int | None, limit: int) -> bool:
    return n is not None and 0 < n <= limit and not n & (n - 1)


def _param_problem(target: str, key: str, value) -> str | None:
    """The reference's message for a bad hint value, or None."""
    where = f"{target}.{key}"
    n = _int(value)
    if key == "allow_tma":
        ok = isinstance(value, BoolAttr | bool)
        return None if ok else f"boolean value expected for {where}"
    if n is None:
        return f"integer value expected for {where}"
    if key == "num_cta_in_cga":
        if target.startswith(_SINGLE_CTA_TARGETS) and n != 1:
            return f"expected 1 for {where}"
        return None if _pow2_at_most(n, 16) else f"expected power-of-two ≤ 16 for {where}"
    if key == "num_worker_warps_per_cta":
        return None if _pow2_at_most(n, 32) else f"expected power-of-two ≤ 32 for {where}"
    if key == "latency":
        return None if 1 <= n <= 10 else f"integer value in the range [1, 10] is expected for {where}"
    if key == "occupancy":
        return None if 1 <= n <= 32 else f"integer value in the range [1, 32] is expected for {where}"
    return f"unknown param {key} for {target}"


def hint_problems(op: Operation, hints: OptimizationHintsAttr) -> list[str]:
    """Everything the reference would warn about in ``hints`` on ``op``."""
    problems = []
    valid = _keys_for(op)
    for target, params in hints.targets:
        if target not in KNOWN_TARGETS:
            problems.append(f"unknown hint key {target}")
            continue
        for key, value in getattr(params, "entries", ()):
            if valid and key not in valid:
                problems.append(f"{key} is not known hint for current Operation")
                continue
            msg = _param_problem(target, key, value)
            if msg:
                problems.append(msg)
    return problems


def check_op_hints(op: Operation) -> None:
    hints = op.attributes.get("optimization_hints")
    if not isinstance(hints, OptimizationHintsAttr) or not hints.targets:
        return
    for target, params in hints.targets:
        if not isinstance(params, DictAttr):
            raise fail(f"expected dictionary attribute for optimization_hints entry "
                       f"`{target}` got value={params}")
    options = current_options()
    if not options.hint_warnings:
        return
    problems = hint_problems(op, hints)
    for msg in problems:
        warn(msg, op)
    if problems and options.hint_errors:
        raise fail("Optimization hints verification failed")
