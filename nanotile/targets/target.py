"""What a PTX target is: its name, the PTX header it needs and its architecture flags.

The per-architecture packages (sm90/, sm100/) each declare one ``Target``; everything
the two share (the lowering and the PTX builder) lives beside this file.

What a target supports: every element type and op of Tile IR is available on every
target, except those in ``ARCH_ELEMENT_TYPES`` / ``ARCH_OPS``, which only some GPUs have;
each ``Target`` lists the ones it has (``element_types`` / ``ops``). The pass
``check-target-support{gpu=...}`` (passes/check_target_support.py), first in each default
pipeline, refuses a kernel that uses one its target lacks, as tileiras does ("error:
Incompatibility with architecture 'sm_90': unsupported type 'f8E8M0FNU'").

What a target selects differently: instruction selection (ptx/select_*.py) is shared; a
``Target`` may replace parts of it with rules of its own, ``select_overrides`` (a name of
``SELECT_HOOKS`` below -> rule). The shared code asks for its hook's rule first and uses
its own lowering when the target has none or the rule declines (returns None / False).
sm90 registers wgmma (its plan for assign-layouts and the selection of its ops, in
sm90/); sm100 registers the cvt forms PTX 8.6 added for the element types only it has
(f4E2M1FN, f8E8M0FNU), in sm100/select_convert.py. A Target made with
``dataclasses.replace(target, select_overrides=...)`` selects with other rules (the
``elementwise`` hook lets a course lab put a student's lowering in place of the shared one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# Element types only some GPUs have (tileiras 13.x, checked on the cutile-tests corpus:
# tileiras_times.csv rc 5 = exactly the kernels using one on a target without it):
#   f8E8M0FNU (block scales) and f4E2M1FN (FP4): sm_100 (Blackwell) and later, not sm_90;
#   f8E5M3FNU: Rubin only, neither sm_90 nor sm_100.
ARCH_ELEMENT_TYPES = frozenset({"f8E8M0FNU", "f4E2M1FN", "f8E5M3FNU"})
# Ops only some GPUs have: block-scaled MMA (tcgen05.mma ... block_scale) is sm_100's.
# (Every valid mmaf_scaled also has an f8E8M0FNU or f4E2M1FN operand, so tileiras names
# the type; nanotile names the type first too.)
ARCH_OPS = frozenset({"mmaf_scaled"})

# The places where a target's own instruction-selection rules replace the shared ones
# (Target.select_overrides): hook name -> the rule's signature and contract. ``lw`` is the
# selection state (ptx/select_instructions.Selection: ``lw.fn`` is the kernel builder).
SELECT_HOOKS = {
    # ptx/select_convert.to_f32_any: a register holding an f8E8M0FNU / f4E2M1FN / f8E5M3FNU
    # (its bits in the low bits of a b16 register) -> an f32 register with its exact
    # value, or None to use the shared integer decoding.
    "decode_narrow_float": "(lw, x: str, t: ElementType) -> str | None",
    # ptx/select_convert._encode: an f32 register -> the bits of ``rt`` (f8E8M0FNU /
    # f4E2M1FN / f8E5M3FNU) written to b16 register ``out``, rounded in ``mode`` exactly as
    # the interpreter rounds the f32 value; True if done, False to use the shared encoding.
    # The f32 holds the exact source value (f32, or f16/bf16 widened), or for an f64
    # source the shared code's f32 narrowing: round-to-odd (nearest modes of f4E2M1FN and
    # f8E5M3FNU), round-to-nearest (f8E8M0FNU nearest); directed modes of f8E8M0FNU from
    # f64 never reach the hook.
    "encode_narrow_float": "(lw, x: str, rt: ElementType, mode: RoundingMode, out: str) -> bool",
    # ptx/select_arith.emit_scalar: the instructions of one register of an elementwise op
    # (``ins``: its operands' registers, ``out``: the result's), asked before the shared
    # rules; True if done, False to use the shared lowering. No target of nanotile sets it:
    # it is how a course lab (labs/05-lowering) plugs a student's rules into the pipeline.
    "elementwise": "(lw, op: Operation, ins: list[str], out: str) -> bool",
    # ptx/assign_layouts (option mma=wgmma): the plan of an mmaf/mmai on this target's own
    # MMA instruction, asked before the shared mma.sync plan (ptx/mma_plan.py); None to
    # use that. The plan gives ``accumulator(shape)`` (a distributed layout) and
    # ``operand(i, type, source)`` (the #shared layout of A, i = 0, or B, i = 1, stored
    # from registers in layout ``source``). sm90 sets it:
    # wgmma (sm90/wgmma_plan.py).
    "plan_mma": "(op: Operation, warps: int) -> plan | None",
    # ptx/select_instructions: the instructions of a simt op the shared rules do not know
    # (the target's own ops, written by its own passes); True if done, False to refuse
    # the op. sm90 sets it: the wgmma ops of lower-wgmma (sm90/select_wgmma.py).
    "op": "(lw, op: Operation) -> bool",
}


@dataclass(frozen=True)
class Target:
    """One GPU generation as the PTX back end sees it."""

    gpu_name: str      # what --gpu-name takes: sm_90, sm_100
    ptx_target: str    # .target: the arch-specific variant (wgmma/tcgen05 need it)
    ptx_version: str   # .version: the lowest that accepts ptx_target (reference/)
    ptxas_arch: str    # -arch for ptxas
    # which of ARCH_ELEMENT_TYPES / ARCH_OPS this GPU has (all other types and ops: all)
    element_types: frozenset[str] = frozenset()
    ops: frozenset[str] = frozenset()
    # this target's own instruction-selection rules: SELECT_HOOKS name -> rule (functions:
    # left out of == and hash)
    select_overrides: Mapping[str, Callable[..., Any]] = field(
        default_factory=lambda: MappingProxyType({}), compare=False)

    def __post_init__(self) -> None:
        assert self.element_types <= ARCH_ELEMENT_TYPES and self.ops <= ARCH_OPS
        assert set(self.select_overrides) <= set(SELECT_HOOKS), set(self.select_overrides)

    def select_rule(self, hook: str) -> Callable[..., Any] | None:
        """This target's rule for instruction-selection hook ``hook`` (SELECT_HOOKS), or
        None: the shared lowering."""
        assert hook in SELECT_HOOKS, hook
        return self.select_overrides.get(hook)

    def supports_element_type(self, name: str) -> bool:
        return name not in ARCH_ELEMENT_TYPES or name in self.element_types

    def supports_op(self, name: str) -> bool:
        return name not in ARCH_OPS or name in self.ops

    def header(self) -> str:
        return (f"//\n// Generated by nanotile for {self.gpu_name}\n//\n\n"
                f".version {self.ptx_version}\n.target {self.ptx_target}\n"
                ".address_size 64\n\n")


DEFAULT_THREADS = 128  # 4 warps (DESIGN.md, "Kernel ABI")


def cta_threads(entry: Any, gpu_name: str) -> int:
    """CTA size of an entry: ``num_warps`` from its optimization hints for ``gpu_name``
    (or ``default``), else 4 warps."""
    hints = entry.attributes.get("optimization_hints")
    warps = None
    for arch, hint in getattr(hints, "targets", ()) or ():
        if arch in ("default", gpu_name) and hint.get("num_warps") is not None:
            value = hint.get("num_warps")
            warps = int(getattr(value, "value", value))
    return 32 * warps if warps else DEFAULT_THREADS



WARPS = "nanotile.warps"  # the entry attribute assign-layouts records the CTA's warps in


def entry_warps(entry: Any) -> int:
    """Warps of an entry's CTA once layouts are assigned: the ``nanotile.warps`` attribute
    assign-layouts records (the layouts and everything below were made for it); a
    hand-written module of a later stage without it has the default CTA."""
    warps = entry.attributes.get(WARPS)
    return int(getattr(warps, "value", warps)) if warps is not None else DEFAULT_THREADS // 32


def all_targets() -> list[Target]:
    """Every target nanotile knows, oldest first."""
    from .sm90 import SM90
    from .sm100 import SM100

    return [SM90, SM100]


def get_target(gpu_name: str) -> Target:
    """The target called ``gpu_name`` (sm_90 or sm_100); CompileError otherwise."""
    from ..diagnostics import CompileError, Diagnostic

    known = {t.gpu_name: t for t in all_targets()}
    if gpu_name not in known:
        raise CompileError(Diagnostic("error", f"unknown --gpu-name '{gpu_name}' (known: "
                                               f"{', '.join(known)})", "<command line>"))
    return known[gpu_name]
